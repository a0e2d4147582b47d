"""The numbers the notebooks' prose quotes are the numbers their cells print.

A learner checks the text against the output above it; a figure that drifted after a change of the cost
model (notebook 05 once said "about 3% full" under an output of 10.5%) is where trust is lost. Each claim
below names a number in a notebook's markdown (a regex whose group is the number) and where the notebook
prints it (a regex on the committed outputs whose group is the number), with the factor from the output's
unit to the prose's. The prose may round: it must agree to the last digit it quotes.
"""

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


@dataclass(frozen=True)
class Claim:
    notebook: str
    prose: str  # regex on the markdown; group 1 is the quoted number
    output: str  # regex on the printed outputs; group 1 is the number printed
    factor: float = 1.0  # output unit -> prose unit (e.g. 1e-6 for bytes -> MB)
    output_notebook: str = None  # when the prose quotes another notebook's output
    divided_by: str = None  # a second output regex: the prose quotes the ratio of the two numbers printed

    @property
    def id(self):
        return f"{self.notebook[:2]}: {self.prose}"


N00, N01, N02, N03 = "00_ipu_and_bsp", "01_porting_keras_to_the_ipu", "02_steps_per_execution", "03_replication"
N04, N05, N06, N07 = "04_pipelining", "05_profiling", "06_half_precision", "07_where_next"
N08, N09 = "08_poptorch_on_the_ipu", "09_sizing_a_real_model"
NUMBER = r"([\d,]+(?:\.\d+)?)"

CLAIMS = [
    # 00: the first program's superstep, the broadcast, the imbalance
    Claim(N00, r"13 × 6 = (78) cycles of compute", r"add one +3 +(\d+) +150"),
    Claim(N00, r"on-chip sync \((150) cycles\)", r"add one +3 +\d+ +(\d+)"),
    Claim(N00, r"\(150 cycles\): (228) cycles", r"add one +3 +\d+ +\d+ +\d+ +(\d+)"),
    Claim(N00, r"that is (32) cycles of exchange", r"matrix x vector +1 +\d+ +\d+ +(\d+)"),
    Claim(N00, r"Predicted factor: (8)×", r"ratio (\d+)x"),
    # 01: the baseline, the partial batch, compilation and the cache, CPU against IPU
    Claim(N01, r"which reaches about (80)%", r"40/40 \[=+\] - \S+ \S+ - loss: [\d.]+ - accuracy: ([\d.]+)\n", 100),
    Claim(N01, r"so an epoch is (127) steps", r"(\d+)/\1 \[=+\] - \d+s \d+ms/step - loss"),
    Claim(N01, r"and one \*\*partial batch\*\* of (36)", r"\((\d+) dropped\), 126 batches"),
    Claim(N01, r"the tutorial loses (32) training", r"^(\d+) \d+$"),
    Claim(N01, r"32 training and (16) test images", r"^\d+ (\d+)$"),
    Claim(N01, r"The \*\*first epoch\*\* takes about (\d+) s", r"126/126 \[=+\] - (\d+)s"),
    Claim(N01, r"`evaluate` takes about (15) s for its 40 steps", r"40/40 \[=+\] - (\d+)s \S+ \(simulated\)"),
    Claim(N01, r"instead of (\d+) s to compile it", r"train program: .* compile ([\d.]+) s"),
    Claim(
        N01,
        r"costs about (1) s \(simulated\) to load",
        r"5/5 \[=+\] - (\d+)s \S+ \(simulated\) - loss: [\d.]+ - accuracy: 0\.1000",
    ),
    Claim(N01, r"barely trained \(([\d.]+)% accuracy", r"IPU \(simulated\) +[\d.]+ +([\d.]+)", 100),
    # 02: the overhead, the speed-up, host I/O
    Claim(N02, r"about \*\*([\d.]+) ms\*\* of overhead", r"host overhead per execution: ([\d.]+) ms"),
    Claim(N02, r"takes about ([\d.]+) ms \(section 5", r"Real data: ([\d.]+) us per step", 1e-3),
    Claim(
        N02,
        r"The accuracy, (22)% after the second epoch",
        r"32/32 \[=+\] - 0s 3ms/step \(simulated\) - loss: [\d.]+ - accuracy: ([\d.]+)",
        100,
    ),
    Claim(N02, r"2\.8 ms / 32 = (88) us", r"host overhead per execution: ([\d.]+) ms", 1e3 / 32),
    Claim(N02, r"host syncs and transfers, ([\d.]+)% \+ [\d.]+%", r"host->device +[\d.]+ us +([\d.]+)%"),
    Claim(N02, r"host syncs and transfers, [\d.]+% \+ ([\d.]+)%", r"device->host +[\d.]+ us +([\d.]+)%"),
    Claim(
        N02,
        r"host syncs and transfers, [\d.]+% \+ [\d.]+% = (\d+)% of this small model's step",
        r"host I/O was [\d.]+ us of each [\d.]+ us step \((\d+)%\)",
    ),
    # 02 §6: the custom loop's host call, Keras', and the on-device loop's speed-up
    Claim(N02, r"for less than Keras' ([\d.]+) ms", r"host overhead per execution: ([\d.]+) ms"),
    Claim(N02, r"Only the host's call differs\*\*: ([\d.]+) ms", r"custom loop, a call per batch +([\d.]+) ms"),
    Claim(N02, r"against ([\d.]+) ms for Keras", r"fit, steps_per_execution=1 +([\d.]+) ms"),
    Claim(N02, r"the on-device loop is ([\d.]+)x faster still", r"against a call per batch: ([\d.]+)x faster"),
    Claim(
        N02,
        r"loss tracker and accuracy on the device in every step \(.*?\): ([\d.]+) us here",
        r"device step is ([\d.]+) us longer",
    ),
    # 03: the all-reduce and the host link
    Claim(N03, r"effective batch size, (128)", r"your effective batch size is (\d+)\."),
    Claim(N03, r"Each epoch is now (16) steps", r"(\d+)/\1 \[=+\] - \d+s \d+s/step"),
    Claim(
        N03,
        r"The accuracy, (22)% after the second epoch",
        r"16/16 \[=+\] - 0s \S+ \(simulated\) - loss: [\d.]+ - accuracy: ([\d.]+)",
        100,
    ),
    Claim(N03, r"\((48\.4) us against 43\.8 us in notebook 02\)", r"host->device +([\d.]+) us"),
    Claim(N03, r"\(48\.4 us against (43\.8) us in notebook 02\)", r"host->device +([\d.]+) us", output_notebook=N02),
    Claim(N03, r"computes for ~(\d+) us a step \(section 3\)", r"compute +([\d.]+) us +[\d.]+%"),
    # 04: the unbalanced cut, the best cut, recomputation
    Claim(N04, r"\(([\d.]+) − [\d.]+ = [\d.]+ us: what stage 0 gains", r"conv2d_1 +([\d.]+) +[\d.]+ +[\d,]+ +[\d.]+"),
    Claim(N04, r"\([\d.]+ − ([\d.]+) = [\d.]+ us: what stage 0", r"max_pooling2d +([\d.]+) +[\d.]+ +[\d,]+ +[\d.]+"),
    Claim(N04, r"us of both stages: ([\d.]+) \+ [\d.]+\)", r"conv2d_1 +([\d.]+) +[\d.]+ +[\d,]+ +[\d.]+"),
    Claim(N04, r"us of both stages: [\d.]+ \+ ([\d.]+)\)", r"conv2d_1 +[\d.]+ +([\d.]+) +[\d,]+ +[\d.]+"),
    Claim(N04, r"its device step takes ([\d.]+) us", r"^conv2d_1 +[\d.]+ +[\d.]+ +[\d,]+ +([\d.]+)"),
    Claim(N04, r"against ([\d.]+) us on one IPU", r"one IPU, no pipeline +([\d.]+)"),
    Claim(N04, r"only (410) kB per micro-batch", r"max_pooling2d_1 +[\d.]+ +[\d.]+ +([\d,]+)"),
    Claim(N04, r"\(([\d.]+) against [\d.]+ us, the last row\)", r"max_pooling2d_1 +[\d.]+ +[\d.]+ +[\d,]+ +([\d.]+)"),
    Claim(N04, r"\([\d.]+ against ([\d.]+) us, the last row\)", r"one IPU, no pipeline +([\d.]+)"),
    Claim(N04, r"instead of (2) MB", r"stage 0 sends ([\d,]+) bytes of activations", 1e-6),
    Claim(
        N04,
        r"64 × 8 × 1 = (512) samples",
        r"Training is accumulating 8 batches per optimizer step, your effective batch size is (\d+)\.",
    ),
    # 05: memory, liveness, the execution
    Claim(N05, r"the fullest tile is only ([\d.]+)% full", r"fullest tile \d+: [\d,]+ of [\d,]+ bytes \(([\d.]+)%\)"),
    Claim(N05, r"more than its ([\d,]+) bytes", r"fullest tile \d+: ([\d,]+) of"),
    Claim(
        N05, r"against (128) bytes of variables", r"variables +[\d,]+ bytes over the IPU, +([\d,]+) on the fullest tile"
    ),
    Claim(N05, r"at step (\d+) of \d+", r"peak: [\d,]+ bytes at step (\d+)"),
    Claim(N05, r"at step \d+ of (\d+)", r"(\d+) program steps; always live"),
    Claim(N05, r"\(infeed ([\d,]+) \+ outfeed [\d,]+ =", r"^  infeed +8 x +[\d,]+ = +([\d,]+) cycles"),
    Claim(N05, r"\(infeed [\d,]+ \+ outfeed ([\d,]+) =", r"^  outfeed +8 x +[\d,]+ = +([\d,]+) cycles"),
    Claim(N05, r"= 468,912 of the ([\d,]+) cycles\)", r"one execution: ([\d,]+) cycles"),
    Claim(N05, r"against ([\d.]+)% for all the compute", r"compute [\d,]+ \(([\d.]+)%\), sync"),
    Claim(N05, r"\(utilisation ([\d.]+)%\)", r"tile utilisation ([\d.]+)%, tile balance over"),
    # 06: fp16's gain, the partials, the memory proportion
    Claim(N06, r"drops from ([\d.]+) to [\d.]+ us, only", r"float32 +device +([\d.]+) us/step"),
    Claim(N06, r"drops from [\d.]+ to ([\d.]+) us, only", r"mixed_float16 +device +([\d.]+) us/step"),
    Claim(
        N06,
        r"drops from [\d.]+ to [\d.]+ us, only ([\d.]+)×",
        r"float32 +device +([\d.]+) us/step",
        divided_by=r"mixed_float16 +device +([\d.]+) us/step",
    ),
    Claim(N06, r"\(\d+ against (\d+)\)", r"float32 +device +[\d.]+ us/step \| (\d+) compute sets"),
    Claim(N06, r"\((\d+) against \d+\)", r"mixed_float16 +device +[\d.]+ us/step \| (\d+) compute sets"),
    Claim(
        N06,
        r"the step drops from [\d.]+ to ([\d.]+) us \(the convolutions",
        r"partialsType 'half' : device +([\d.]+) us/step",
    ),
    Claim(
        N06,
        r"the temporary memory from\s+([\d.]+) to",
        r"partialsType 'float': device +[\d.]+ us/step \| temporary memory +([\d,]+) B",
        1e-6,
    ),
    Claim(
        N06,
        r"the temporary memory from\s+[\d.]+ to ([\d.]+) MB",
        r"partialsType 'half' : device +[\d.]+ us/step \| temporary memory +([\d,]+) B",
        1e-6,
    ),
    Claim(N06, r"and the fullest tile from ([\d,]+) to", r"partialsType 'float'.*fullest tile +([\d,]+) B"),
    Claim(N06, r"and the fullest tile from [\d,]+ to ([\d,]+) B", r"partialsType 'half' .*fullest tile +([\d,]+) B"),
    Claim(N06, r"\(([\d,]+) -> [\d,]+ B\)", r"no stage options +out of memory: needs ([\d,]+) bytes"),
    Claim(N06, r"\([\d,]+ -> ([\d,]+) B\)", r"forward stages only +out of memory: needs ([\d,]+) bytes"),
    Claim(N06, r"its fullest tile at ([\d,]+) B", r"fullest tile per stage \['([\d,]+)'"),
    # 07: the schedules' stash
    Claim(N07, r"GPipe stashes all (16) micro-batches", r"GPipe +\d+ +\d+% +\[(\d+),"),
    Claim(N07, r"from its own to the last \((4), 3, 2, 1\)", r"1F1B +\d+ +\d+% +\[(\d+),"),
    Claim(N07, r"2\(n − s\) − 1 \((7), 5, 3, 1\)", r"Eager 1F1B +\d+ +\d+% +\[(\d+),"),
    Claim(N07, r"twice 1F1B's \((8), 6, 4, 2", r"Grouped +\d+ +\d+% +\[(\d+),"),
    # 08: the PopTorch port's calls and accuracy, the host's share, the memory option
    Claim(N08, r"Each call took (\d+) images", r"^(\d+) images in, \d+ predictions"),
    Claim(N08, r"gave back only (\d+) predictions", r"^\d+ images in, (\d+) predictions"),
    Claim(N08, r"the network reaches about (\d+)%", r"Accuracy on test set: ([\d.]+)%"),
    Claim(N08, r"inference model's \*\*micro-batch of (\d+)\*\*", r"inference: micro-batch (\d+),"),
    Claim(N08, r"the host's call is (\d+)% of the time", r"^ +1 +8 +[\d.]+ +[\d,]+ +(\d+)%"),
    Claim(N08, r"with 200 iterations, (\d+)%", r"^ +200 +1600 +[\d.]+ +[\d,]+ +(\d+)%"),
    Claim(N08, r"temporary memory falls from ([\d,]+) to", r"^ +default +([\d,]+) +[\d.]+$"),
    Claim(N08, r"temporary memory falls from [\d,]+ to ([\d,]+) bytes", r"^ +0\.05 +([\d,]+) +[\d.]+$"),
    Claim(N08, r"a micro-batch takes ([\d.]+) us instead", r"^ +0\.05 +[\d,]+ +([\d.]+)$"),
    Claim(N08, r"us instead of ([\d.]+) us", r"^ +default +[\d,]+ +([\d.]+)$"),
    # 09: ResNet-50 and BERT-base sized from shapes: the micro-batch that fits, the memory, recomputation, a POD16
    Claim(N09, r"its fullest tile holds ([\d,]+) of 638,976 bytes", r"^ +7 +([\d,]+) +yes +[\d.]+ +[\d.,]+$"),
    Claim(N09, r"and micro-batch 8 needs ([\d,]+)\.", r"^ +8 +([\d,]+) +no +[\d.]+ +[\d.,]+$"),
    Claim(N09, r"\(([\d.]+) images/s at 7 against", r"^ +7 +[\d,]+ +yes +[\d.]+ +([\d.,]+)$"),
    Claim(
        N09,
        r"images/s at 7 against ([\d.]+) at 1\)",
        r"^resnet50: micro-batch 1, [\d.]+ ms per step, ([\d.]+) images/s",
    ),
    Claim(N09, r"variables\*\* take ([\d,]+) bytes", r"^  not-always-live variables +([\d,]+) B"),
    Claim(N09, r"are only ([\d,]+) bytes here", r"^  always-live variables +([\d,]+) B"),
    Claim(N09, r"\(internal exchange code ([\d,]+) B", r"^  internal exchange code +([\d,]+) B"),
    Claim(N09, r"vertex instance state ([\d,]+) B\)", r"^  vertex instance state +([\d,]+) B"),
    Claim(
        N09,
        r"`conv3_block1_0_conv/Conv2D:39/grad/product1/temporaries`, ([\d,]+) B\)",
        r"^  conv3_block1_0_conv/Conv2D:39/grad/product1/temporaries +temporary memory +([\d,]+) B",
    ),
    Claim(N09, r"Not only tile (\d+) is full", r"^fullest tile (\d+): [\d,]+ of 638,976 bytes"),
    Claim(N09, r"([\d,]+) of the 1,472 tiles are over", r"bytes; ([\d,]+) of 1,472 tiles over their SRAM"),
    Claim(N09, r"The tile's peak is at step (\d+)", r"^live peak on tile \d+: [\d,]+ B at step (\d+)"),
    Claim(N09, r"one product's temporaries are live \(([\d,]+) B\)", r"^temporary memory live there: ([\d,]+) B"),
    Claim(N09, r"the activations \(([\d.]+) MiB\)", r"^  activations +([\d.,]+) MiB"),
    Claim(N09, r"running at that step \(([\d.]+) MiB\)", r"^  temporary memory +([\d.,]+) MiB"),
    Claim(
        N09,
        r"temporary memory live at the fullest tile's peak falls from ([\d,]+) to",
        r"^ +default +([\d,]+) +[\d,]+ +no",
    ),
    Claim(N09, r"peak falls from [\d,]+ to ([\d,]+) bytes", r"^ +0\.15 +([\d,]+) +[\d,]+ +yes"),
    Claim(N09, r"micro-batch 8 fits \(([\d,]+) B\)", r"^ +0\.15 +[\d,]+ +([\d,]+) +yes"),
    Claim(N09, r"at ([\d.]+) ms per step instead of [\d.]+\. Lower", r"^ +0\.15 +[\d,]+ +[\d,]+ +yes +([\d.]+)$"),
    Claim(N09, r"ms per step instead of ([\d.]+)\. Lower", r"^ +default +[\d,]+ +[\d,]+ +no +([\d.]+)$"),
    Claim(N09, r"at 0\.05 the temporaries shrink again \(([\d,]+) B\)", r"^ +0\.05 +([\d,]+) +[\d,]+ +yes +[\d.]+$"),
    Claim(N09, r"needs more than at 0\.15 \(([\d,]+) B against", r"^ +0\.05 +[\d,]+ +([\d,]+) +yes +[\d.]+$"),
    Claim(N09, r"each step costs more time \(([\d.]+) ms\)", r"^ +0\.05 +[\d,]+ +[\d,]+ +yes +([\d.]+)$"),
    Claim(N09, r"needs ([\d,]+) bytes instead of [\d,]+, at", r"^ +16 +yes +([\d,]+) +yes"),
    Claim(N09, r"bytes instead of ([\d,]+), at [\d.]+ ms", r"^ +16 +no +([\d,]+) +no"),
    Claim(N09, r"at ([\d.]+) ms per step instead of [\d.]+ \(the forward", r"^ +16 +yes +[\d,]+ +yes +([\d.]+)"),
    Claim(N09, r"ms per step instead of ([\d.]+) \(the forward", r"^ +16 +no +[\d,]+ +no +([\d.]+)"),
    Claim(N09, r"\(([\d,]+) against [\d,]+ B\) but only costs", r"^ +7 +yes +([\d,]+) +yes"),
    Claim(N09, r"\([\d,]+ against ([\d,]+) B\) but only costs", r"^ +7 +no +([\d,]+) +yes"),
    Claim(N09, r"here ([\d.]+) images/s at 16", r"^ +16 +yes +[\d,]+ +yes +[\d.]+ +([\d.,]+)$"),
    Claim(N09, r"images/s at 16 against ([\d.]+) at 7\.", r"^ +7 +no +[\d,]+ +yes +[\d.]+ +([\d.,]+)$"),
    Claim(
        N09,
        r"fits 8 sequences per micro-batch \(fullest tile ([\d,]+) B\)",
        r"\(predict\): micro-batch 8,[^\n]*\n[^\n]*\nmemory: fullest tile ([\d,]+) of",
    ),
    Claim(
        N09,
        r"B\) at ([\d,.]+) sequences per second",
        r"\(predict\): micro-batch 8,[^\n]*\ncompile [\d,.]+ s; [\d.]+ ms per step; ([\d,.]+) samples/s",
    ),
    Claim(
        N09,
        r"one sequence per micro-batch \(([\d,]+) B\)",
        r"bert_encoder \(train\): micro-batch 1,[^\n]*\n[^\n]*\nmemory: fullest tile ([\d,]+) of",
    ),
    Claim(
        N09,
        r"at ([\d.]+) sequences per second: with",
        r"bert_encoder \(train\): micro-batch 1,[^\n]*\ncompile [\d,.]+ s; [\d.]+ ms per step; ([\d,.]+) samples/s",
    ),
    Claim(N09, r"with ([\d,]+) parameters the weights", r"^BERT-base: ([\d,]+) parameters"),
    Claim(N09, r"BERT-base's (\d+) million weights", r"^BERT-base: ([\d,]+) parameters", 1e-6),
    Claim(N09, r"would otherwise be (\d+) MB of float32", r"^BERT-base: ([\d,]+) parameters", 4e-6),
    Claim(N09, r"\((\d+) are live at the tile's peak", r"^live peak on tile .* not always live, (\d+) tensors\)"),
    Claim(
        N09,
        r"the weights alone are ([\d.]+) MiB",
        r"bert_encoder \(train\)[^\n]*\n[^\n]*\nmemory: [^\n]*variables ([\d.]+) MiB",
    ),
    Claim(
        N09,
        r"vertex instance state ([\d.]+) MiB in training",
        r"bert_encoder \(train\)[^\n]*\n[^\n]*\nmemory: [^\n]*vertex instance state ([\d.]+) MiB",
    ),
    Claim(
        N09,
        r"against ([\d.]+) MiB in inference",
        r"bert_encoder \(predict\)[^\n]*\n[^\n]*\nmemory: [^\n]*vertex instance state ([\d.]+) MiB",
    ),
    Claim(N09, r"the first IPU's fullest tile needs ([\d,]+) bytes", r"^cut only +([\d,]+) "),
    Claim(N09, r"the fullest needing ([\d,]+) bytes", r"^\+ recomputation +[\d,]+ +[\d,]+ +([\d,]+) +[\d,]+ +yes"),
    Claim(N09, r"leaves room to spare \(([\d,]+) B\)", r"^\+ recomputation, proportion 0\.15 +([\d,]+) "),
    Claim(N09, r"The price is time: ([\d,.]+) images/s", r"^\+ recomputation +[\d,]+ .* yes +([\d,.]+)$"),
    Claim(N09, r"\(([\d,.]+) at the proportion of 0\.15\)", r"^\+ recomputation, proportion 0\.15 .* yes +([\d,.]+)$"),
    Claim(N09, r"\) against ([\d,.]+) for the pipeline", r"^cut only .* no +([\d,.]+)$"),
    Claim(
        N09,
        r"the last IPU needs ([\d,]+) bytes",
        r"^stages recomputed, micro-batch 16 +[\d,]+ +[\d,]+ +[\d,]+ +([\d,]+) +no",
    ),
    Claim(
        N09,
        r"micro-batch 16 fits \(([\d,]+) B on the fullest IPU\)",
        r"^\+ checkpoints, micro-batch 16 +[\d,]+ +[\d,]+ +[\d,]+ +([\d,]+) +yes",
    ),
    Claim(N09, r"much the same rate \(([\d,.]+) sequences/s", r"^\+ checkpoints, micro-batch 16 .* yes +([\d,.]+)$"),
    Claim(N09, r"sequences/s against ([\d,.]+)\)", r"^stages recomputed, micro-batch 16 .* no +([\d,.]+)$"),
    Claim(
        N09,
        r"Graphcore's configuration runs \(([\d,]+) B on the fullest IPU\)",
        r"^\+ checkpoints, micro-batch 32 +[\d,]+ +[\d,]+ +[\d,]+ +([\d,]+) +yes",
    ),
    Claim(
        N09, r"on the fullest IPU\), at ([\d,.]+) sequences/s", r"^\+ checkpoints, micro-batch 32 .* yes +([\d,.]+)$"
    ),
    Claim(N09, r"all-reduce of every weight: (\d+) MB", r"^ResNet-50: ([\d,]+) parameters", 2e-6),
    Claim(N09, r"an all-reduce of (\d+) MB of gradients", r"^ResNet-50: ([\d,]+) parameters", 2e-6),
    Claim(N09, r"16 replicas give ([\d,]+) images/s", r"^ *float32 +16 +1 +([\d,]+) +[\d,]+ +\d+% +\d+%$"),
    Claim(N09, r"only (\d+)% of sixteen times", r"^ *float32 +16 +1 +[\d,]+ +[\d,]+ +(\d+)% +\d+%$"),
    Claim(N09, r"brings each IPU to (\d+)% of one", r"^ *float32 +16 +64 +[\d,]+ +[\d,]+ +(\d+)% +\d+%$"),
    Claim(N09, r"one replica's rate: ([\d,]+) images/s", r"^ *float32 +16 +64 +([\d,]+) +[\d,]+ +\d+% +\d+%$"),
    Claim(N09, r"receiving them takes (\d+)% of an IPU's", r"^ *float32 +16 +64 +[\d,]+ +[\d,]+ +\d+% +(\d+)%$"),
    Claim(N09, r"the infeed falls to (\d+)% of the cycles", r"^ *uint8 +16 +64 +[\d,]+ +[\d,]+ +\d+% +(\d+)%$"),
    Claim(N09, r"each IPU keeps (\d+)% of one replica's rate", r"^ *uint8 +16 +64 +[\d,]+ +[\d,]+ +(\d+)% +\d+%$"),
    Claim(N09, r"one replica's rate, ([\d,]+) images/s in all", r"^ *uint8 +16 +64 +([\d,]+) +[\d,]+ +\d+% +\d+%$"),
    Claim(N09, r"cycles against (\d+)% for one replica", r"^ *float32 +1 +1 +[\d,]+ +[\d,]+ +\d+% +(\d+)%$"),
]


def printed_text(notebook_name):
    """Every text output of the committed notebook, in order (ANSI colours removed)."""
    notebook = json.loads((NOTEBOOKS / f"{notebook_name}.ipynb").read_text(encoding="utf-8"))
    texts = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("text") or output.get("data", {}).get("text/plain") or output.get("evalue", "")
            texts.append("".join(text) if isinstance(text, list) else text)
    return ANSI_ESCAPE.sub("", "".join(texts))


def markdown_text(notebook_name):
    notebook = json.loads((NOTEBOOKS / f"{notebook_name}.ipynb").read_text(encoding="utf-8"))
    return "\n\n".join("".join(cell["source"]) for cell in notebook["cells"] if cell["cell_type"] == "markdown")


def agrees(quoted: str, printed: float) -> bool:
    """``printed`` rounds to ``quoted``: they agree to the last digit the prose quotes."""
    decimals = len(quoted.split(".")[1]) if "." in quoted else 0
    return abs(float(quoted.replace(",", "")) - printed) <= 0.5 * 10**-decimals + 1e-9


@pytest.mark.parametrize("claim", CLAIMS, ids=[claim.id for claim in CLAIMS])
def test_the_number_the_prose_quotes_is_the_number_printed(claim):
    quoted = re.findall(claim.prose, markdown_text(claim.notebook))
    assert quoted, f"{claim.notebook}: the prose no longer says {claim.prose!r}: update the claim with the prose"
    outputs = printed_text(claim.output_notebook or claim.notebook)
    printed = re.search(claim.output, outputs, re.MULTILINE)
    assert printed, f"{claim.output_notebook or claim.notebook}: no output matches {claim.output!r}"
    value = float(printed.group(1).replace(",", "")) * claim.factor
    if claim.divided_by:
        divisor = re.search(claim.divided_by, outputs, re.MULTILINE)
        assert divisor, f"{claim.output_notebook or claim.notebook}: no output matches {claim.divided_by!r}"
        value /= float(divisor.group(1).replace(",", ""))
    for number in quoted:
        assert agrees(number, value), f"{claim.notebook}: the prose says {number}, the output {printed.group(0)!r}"


@pytest.mark.parametrize(
    "quoted, printed, expected",
    [("31", 30.7, True), ("31", 30.4, False), ("11.4", 11.44, True), ("11.4", 11.46, False), ("72,989", 72989, True)],
)
def test_agreement_is_to_the_last_quoted_digit(quoted, printed, expected):
    assert agrees(quoted, printed) is expected


def test_every_notebook_has_claims():
    assert {claim.notebook for claim in CLAIMS} == {path.stem for path in NOTEBOOKS.glob("*.ipynb")}
