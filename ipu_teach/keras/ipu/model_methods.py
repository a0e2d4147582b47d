"""The names of the Model methods Graphcore's IPU extension adds, announced to Keras' extension point.

``ipu_teach.ipu`` provides them (``ipu_teach.ipu.keras_extensions.ModelExtension``) and Keras never imports
it; naming them here lets a model built without it say how to get them instead of a bare AttributeError.
On a real IPU system ``model.set_pipelining_options`` on a model built outside an IPUStrategy scope is
such a bare AttributeError, as the methods are patched in only there.
"""

from ..engine import extensions

MODEL_METHODS = (
    "set_gradient_accumulation_options",
    "set_replication_options",
    "set_infeed_queue_options",
    "set_outfeed_queue_options",
    "set_asynchronous_callbacks",
    "set_pipelining_options",
    "get_pipeline_stage_assignment",
    "set_pipeline_stage_assignment",
    "reset_pipeline_stage_assignment",
    "print_pipeline_stage_assignment_summary",
    "get_ipu_executable",
)

extensions.announce(
    MODEL_METHODS,
    "it is one of the IPU methods of Graphcore's Keras, which a model gains when it "
    "is built after `from ipu_teach import ipu` (on a real IPU system: `from "
    "tensorflow.python import ipu`, with the model built in an IPUStrategy scope)",
)
