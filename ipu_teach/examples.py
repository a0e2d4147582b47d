"""Models, reports and graphs the course builds again and again: the Graphcore Keras tutorial's MNIST model
for the tour, the exercise solutions and the benchmarks, and the small fixtures the docstring examples share.

The notebooks write the tutorial model out in full (that is the lesson); everything else builds it from here.

Example:

>>> from ipu_teach.examples import tutorial_model_fn
>>> model = keras.Model(*tutorial_model_fn(stages=True))
>>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
[0, 0, 0, 1, 1, 1, 1]
"""

import contextlib


def tutorial_model_fn(stages: bool = False, hidden: int = None, num_classes: int = 10):
    """Returns ``(input_layer, output)`` of the Graphcore Keras tutorial's MNIST CNN, as its ``model_fn`` does.

    Two Conv2D / MaxPooling2D pairs, Flatten, Dropout(0.5) and a softmax Dense: the model every notebook
    ports, so exercise solutions can build it in one line (``keras.Model(*tutorial_model_fn())``).

    Args:
      stages: Boolean, split the model over two pipeline stages where the tutorial splits it. Default: False.
      hidden: Integer or None, the size of a Dense(relu) layer added before the output. Default: None.
      num_classes: Integer, the number of classes of the output. Default: 10.

    Returns:
      The tuple ``(input_layer, output)`` of symbolic tensors.

    Example:

    >>> from ipu_teach.examples import tutorial_model_fn
    >>> model = keras.Model(*tutorial_model_fn())
    >>> model.output_shape, model.count_params()
    ((None, 10), 34826)
    """
    from . import keras

    stage0 = keras.ipu.PipelineStage(0) if stages else contextlib.nullcontext()
    stage1 = keras.ipu.PipelineStage(1) if stages else contextlib.nullcontext()
    input_layer = keras.Input(shape=(28, 28, 1))
    with stage0:
        x = keras.layers.Conv2D(32, kernel_size=(3, 3), activation="relu")(input_layer)
        x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
        x = keras.layers.Conv2D(64, kernel_size=(3, 3), activation="relu")(x)
    with stage1:
        x = keras.layers.MaxPooling2D(pool_size=(2, 2))(x)
        x = keras.layers.Flatten()(x)
        x = keras.layers.Dropout(0.5)(x)
        if hidden:
            x = keras.layers.Dense(hidden, activation="relu")(x)
        x = keras.layers.Dense(num_classes, activation="softmax")(x)
    return input_layer, x


def configure_ipus(num_ipus: int = 1, tiles_per_ipu: int = None):
    """Configures the simulated IPU system as a script does, for examples whose subject is not the configuration.

    The three lines every IPU program starts with (``IPUConfig``, ``auto_select_ipus``,
    ``configure_ipu_system``), plus the small tile count an example may want to keep its report short.

    Args:
      num_ipus: Integer, the IPUs to select. Default: 1.
      tiles_per_ipu: Integer or None, tiles of each simulated IPU. Default: None, all of a Mk2.

    Returns:
      The ``IPUConfig`` it configured.

    Example:

    >>> from ipu_teach.examples import configure_ipus
    >>> config = configure_ipus(2)
    >>> ipu.ipu_strategy.IPUStrategy().num_replicas_in_sync
    2
    """
    from . import ipu

    config = ipu.config.IPUConfig()
    config.auto_select_ipus = num_ipus
    if tiles_per_ipu is not None:
        config.ipu_model.tiles_per_ipu = tiles_per_ipu
    config.configure_ipu_system()
    return config


def small_report(directory: str = "report"):
    """Returns the profiling report of a small model, for the examples of what a report holds.

    One Dense layer (4 inputs, 2 outputs) trained for one execution of two steps on a 16-tile IPU with
    ``profiling.auto_report``: small enough to read every tile, and the same report in every example.

    Args:
      directory: The folder the report is written in. Default: ``"report"``.

    Returns:
      The ``profiling.Report``.

    Example:

    >>> from ipu_teach.examples import small_report
    >>> report = small_report()
    >>> report.compilation.target.numTiles, report.execution.total_cycles()
    (16, 96680)
    """
    import numpy as np

    from . import ipu, keras, profiling

    configure_ipus(1, tiles_per_ipu=16)
    with profiling.auto_report(directory), ipu.ipu_strategy.IPUStrategy().scope():
        model = keras.Sequential([keras.layers.Dense(2, input_shape=(4,))])
        model.compile("sgd", "mse", steps_per_execution=2)
        model.fit(np.ones((8, 4), np.float32), np.ones((8, 2), np.float32), batch_size=4, verbose=0)
    return profiling.open_report(profiling.last_report_path())


def two_stage_model():
    """Returns a small model cut into two pipeline stages, for the examples of pipelining.

    Dense(8, relu) on stage 0 and Dense(2, softmax) on stage 1, over 4 inputs: the smallest model with
    a cut between stages. Build it inside an ``IPUStrategy`` scope to train it on the IPUs.

    Example:

    >>> from ipu_teach.examples import two_stage_model
    >>> model = two_stage_model()
    >>> [a.pipeline_stage for a in model.get_pipeline_stage_assignment()]
    [0, 1]
    """
    from . import keras

    inputs = keras.Input(shape=(4,))
    with keras.ipu.PipelineStage(0):
        x = keras.layers.Dense(8, activation="relu")(inputs)
    with keras.ipu.PipelineStage(1):
        outputs = keras.layers.Dense(2, activation="softmax")(x)
    return keras.Model(inputs, outputs)


def trained_pipeline_model(**pipelining_options):
    """Returns ``two_stage_model()`` trained pipelined over two IPUs, for the examples that read a pipeline.

    It accumulates 4 micro-batches of 4 per weight update (``steps_per_execution=4``) and trains one
    execution; its training executable holds the pipeline's measured stage costs.

    Args:
      **pipelining_options: Further ``set_pipelining_options`` keywords (``pipeline_schedule``...).

    Example:

    >>> from ipu_teach.examples import trained_pipeline_model
    >>> model = trained_pipeline_model()
    INFO:ipu_teach:Training is accumulating 4 batches per optimizer step, your effective batch size is 16.
    >>> model.get_ipu_executable("train").pipeline.costs.stages
    2
    """
    import numpy as np

    from . import ipu, keras

    configure_ipus(2)
    with ipu.ipu_strategy.IPUStrategy().scope():
        model = two_stage_model()
        model.set_pipelining_options(gradient_accumulation_steps_per_replica=4, **pipelining_options)
        model.compile("sgd", "categorical_crossentropy", steps_per_execution=4)
        model.fit(np.ones((16, 4), np.float32), keras.utils.to_categorical(np.zeros(16), 2), batch_size=4, verbose=0)
    return model


def small_timeline():
    """Returns the simulated Timeline of a small BSP program, for the examples that show a timeline.

    Ten repeats of one superstep on a 4-tile IPU: each tile computes 2,000 cycles ("matmul") after
    receiving 1,024 bytes by exchange.

    Example:

    >>> from ipu_teach.examples import small_timeline
    >>> small_timeline().totals()
    {'compute': 20000, 'sync': 1500, 'exchange': 2560}
    """
    import numpy as np

    from . import bsp, hardware

    step = bsp.ComputeSuperstep(
        bsp.CostedComputeSet("matmul", np.full(4, 2_000)), exchange=bsp.Exchange(received=np.full(4, 1_024))
    )
    return bsp.CostEngine(bsp.Repeat(10, step), hardware.MK2.with_tiles(4)).run()


def add_one_graph(tiles: int = 4):
    """Returns ``(graph, v, compute_set)``: a small Poplar graph, for the examples of running one.

    A float32 variable ``v`` of one element per tile, and a compute set whose vertex on each tile adds one
    to its element (a codelet with an in-out field), as in notebook 00.

    Args:
      tiles: Integer, the tiles of the simulated IPU (and elements of ``v``). Default: 4.

    Example:

    >>> from ipu_teach.examples import add_one_graph
    >>> graph, v, compute_set = add_one_graph()
    >>> v.shape, graph.tile_of(v).tolist(), len(compute_set.vertices)
    ((4,), [0, 1, 2, 3], 4)
    """
    from .bsp import poplar

    @poplar.codelet(inouts={"x": ""})
    def add_one(x):
        return x + 1

    graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=tiles).create_device())
    v = graph.add_variable("float32", (tiles,), "v")
    graph.map_tensor_linearly(v)
    compute_set = graph.add_compute_set("add one")
    for tile in range(tiles):
        graph.add_vertex(compute_set, add_one, {"x": v[tile]}, tile=tile)
    return graph, v, compute_set


def bert_encoder(
    keras=None,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int = 3072,
    sequence: int = 128,
    vocabulary: int = 30522,
    max_positions: int = 512,
    segments: int = 2,
    dropout: float = 0.1,
    recomputation_checkpoints: bool = False,
):
    """A BERT encoder (Devlin et al., 2019) made of Keras layers: word, position and segment Embeddings summed
    and normalised, then ``layers`` blocks of MultiHeadAttention, residual Add and LayerNormalization, Dense
    ``intermediate`` (gelu), Dense ``hidden``, residual Add and LayerNormalization. The defaults are
    BERT-base (no pooler): 108.9M parameters, sized on the IPU with ``ipu.utils.estimate``.

    Its inputs are the word ids, the segment ids and the position ids (``0 .. sequence - 1``), each
    ``(batch, sequence)`` integers, as BERT's TensorFlow implementations take them. ``keras`` is the Keras
    module to build it from (default: ipu-teach's; tools/make_keras_goldens.py builds the same with tf-keras).
    ``recomputation_checkpoints`` puts a ``RecomputationCheckpoint`` after every encoder layer, as Graphcore's
    BERT does (nlp/bert/tensorflow2 ``add_recomputation_checkpoints_after = [TFBertLayer]``).

    Example:

    >>> from ipu_teach.examples import bert_encoder
    >>> model = bert_encoder(layers=1, hidden=8, heads=2, intermediate=16, sequence=4, vocabulary=10)
    >>> model.output_shape, model.count_params()
    ((None, 4, 8), 4808)
    """
    if keras is None:
        from . import keras  # noqa: PLC0415 (the tool passes tf-keras instead)
    L = keras.layers
    ids = [L.Input((sequence,), dtype="int32", name=name) for name in ("word_ids", "segment_ids", "position_ids")]
    tables = (("word_embeddings", vocabulary), ("segment_embeddings", segments), ("position_embeddings", max_positions))
    embedded = [L.Embedding(size, hidden, name=name)(x) for (name, size), x in zip(tables, (ids[0], ids[1], ids[2]))]
    x = L.LayerNormalization(epsilon=1e-12, name="embeddings_norm")(L.Add()(embedded))
    x = L.Dropout(dropout)(x)
    for _ in range(layers):
        attended = L.MultiHeadAttention(heads, hidden // heads, dropout=dropout)(x, x)
        x = L.LayerNormalization(epsilon=1e-12)(L.Add()([x, L.Dropout(dropout)(attended)]))
        inner = L.Dense(intermediate, activation="gelu")(x)
        x = L.LayerNormalization(epsilon=1e-12)(L.Add()([x, L.Dropout(dropout)(L.Dense(hidden)(inner))]))
        if recomputation_checkpoints:
            from .ipu.ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint  # noqa: PLC0415

            x = RecomputationCheckpoint()(x)
    return keras.Model(ids, x, name="bert_encoder")


def with_recomputation_checkpoints(model, after, input_dtype=None, preprocessing=None):
    """``model``'s layers (the same layers and weights) called again in the same graph, with a
    ``RecomputationCheckpoint`` after each layer named in ``after``: the recomputation points Graphcore's
    applications choose (its ResNet-50 cuts after ``stage1/unit1/relu``...; its BERT after every encoder layer),
    for a model already built, such as a ``keras.applications`` one. With ``IPUConfig.allow_recompute`` the
    activations between checkpoints are recomputed in the backward pass (:mod:`ipu_teach.ipu.recomputation`).

    ``input_dtype`` declares the new inputs' dtype (``"uint8"``: 8-bit images, as Graphcore's ResNet-50 streams
    them) and ``preprocessing`` (a layer, such as ``Rescaling``) is applied to each before the model's layers.

    Example:

    >>> from ipu_teach.examples import with_recomputation_checkpoints
    >>> x = keras.Input(shape=(8,))
    >>> model = keras.Model(x, keras.layers.Dense(2, name="out")(keras.layers.Dense(4, name="hidden")(x)))
    >>> cut = with_recomputation_checkpoints(model, ["hidden"], "uint8", keras.layers.Rescaling(1 / 255))
    >>> [type(layer).__name__ for layer in cut.layers], cut.inputs[0].dtype
    (['InputLayer', 'Rescaling', 'Dense', 'RecomputationCheckpoint', 'Dense'], 'uint8')
    >>> cut.count_params() == model.count_params()
    True
    """
    from . import keras
    from .ipu.ipu_tensorflow_addons.keras.layers import RecomputationCheckpoint
    from .keras.engine import graph

    unknown = sorted(set(after) - {layer.name for layer in model.layers})
    if unknown:
        raise ValueError(
            f"with_recomputation_checkpoints: model '{model.name}' has no layer(s) {unknown}; name layers of "
            "model.layers (model.summary() lists them)"
        )
    inputs = [
        keras.Input(source.shape[1:], dtype=input_dtype or source.dtype, name=source.layer.name)
        for source in model.inputs
    ]
    given = [preprocessing(x) for x in inputs] if preprocessing is not None else inputs

    def call(layer, value):
        output = layer(value)
        return RecomputationCheckpoint(name=f"{layer.name}_checkpoint")(output) if layer.name in after else output

    values = graph.run(model.inputs, given, model._order, call)
    outputs = [values[id(t)] for t in model.outputs]
    return keras.Model(
        inputs if len(inputs) > 1 else inputs[0], outputs if len(outputs) > 1 else outputs[0], name=model.name
    )
