"""The compiled metrics run on the device (issue 20): Graphcore's Keras computes the loss tracker and every
metric of ``compile`` inside the compiled step, so their work is lowered (``metrics/<name>`` compute sets),
costed by the Engine, run in a pipeline's last stage, and part of the graph's identity."""

import numpy as np
from ipu_test_helpers import configure

import ipu_teach.keras as keras
from ipu_teach import ipu
from ipu_teach.autograd.cost import Reduction
from ipu_teach.examples import tutorial_model_fn


def evaluated(metrics, stages=False, ipus=1, mode="test"):
    """The tutorial's CNN compiled with ``metrics`` on the simulated IPU; the executable of ``mode``."""
    configure(ipus)
    x = np.random.default_rng(0).random((32, 28, 28, 1), np.float32)
    y = keras.utils.to_categorical(np.arange(32) % 10, 10)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Model(*tutorial_model_fn(stages=stages))
        if stages:
            model.set_pipelining_options(gradient_accumulation_steps_per_replica=4)
        model.compile("sgd", "categorical_crossentropy", metrics=metrics, steps_per_execution=4)
        if mode == "test":
            model.evaluate(x, y, batch_size=8, verbose=0)
        else:
            model.predict(x, batch_size=8, verbose=0)
    return model.get_ipu_executable(mode)


def metric_labels(executable):
    return [step.name for step in executable.graph.steps if step.name.startswith("metrics/")]


def test_every_metric_and_the_loss_tracker_are_compute_sets_of_the_step():
    plain = evaluated([])
    with_auc = evaluated(["accuracy", keras.metrics.AUC()])
    assert {label.split("/")[1] for label in metric_labels(plain)} == {"loss"}
    assert {label.split("/")[1] for label in metric_labels(with_auc)} == {"loss", "accuracy", "auc"}
    assert with_auc.graph.compute_sets > plain.graph.compute_sets
    assert with_auc.timeline.total_cycles() > plain.timeline.total_cycles()
    assert metric_labels(evaluated(["accuracy"], mode="predict")) == []  # predict keeps no metric


def test_an_auc_costs_with_its_thresholds_and_keeps_more_counts_than_a_precision():
    small, large = evaluated([keras.metrics.AUC(num_thresholds=50)]), evaluated([keras.metrics.AUC(400)])
    assert large.timeline.total_cycles() > small.timeline.total_cycles()
    reductions = {
        type(metric).__name__: sum(isinstance(item, Reduction) for item in metric.device_work((8, 10)))
        for metric in (keras.metrics.AUC(), keras.metrics.Precision(), keras.metrics.Recall())
    }
    # a sum over the predictions per confusion count kept (AUC: 4; precision, recall: 2), AUC's area after
    assert reductions == {"AUC": 5, "Precision": 2, "Recall": 2}


def test_a_pipeline_computes_the_metrics_in_its_last_stage():
    executable = evaluated(["accuracy"], stages=True, ipus=2)
    first, last = executable.pipeline.stage_graphs
    assert not any(step.name.startswith("metrics/") for step in first.steps)
    assert {step.name for step in last.steps} >= set(metric_labels(executable)) != set()


def test_the_metrics_are_part_of_the_graphs_identity_but_not_their_names():
    auc = evaluated([keras.metrics.AUC()]).graph.signature
    assert evaluated([keras.metrics.AUC(name="another_auc")]).graph.signature == auc
    assert evaluated([keras.metrics.AUC(num_thresholds=50)]).graph.signature != auc
    assert evaluated([]).graph.signature != auc
