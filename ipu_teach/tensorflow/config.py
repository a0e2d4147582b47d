"""``tf.config``: device queries answer with the simulated system (an IPU-POD16 unless chosen otherwise).

As on Graphcore's TensorFlow, the physical IPUs are those of the machine, and a logical IPU device
(``/device:IPU:0``) exists once ``configure_ipu_system`` has attached some of them.
"""

from collections import namedtuple
from types import SimpleNamespace

from ..ipu import system

PhysicalDevice = namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = namedtuple("LogicalDevice", ["name", "device_type"])


def list_physical_devices(device_type=None) -> list:
    """The host CPU and every IPU of the simulated machine (none of type GPU)."""
    devices = [PhysicalDevice("/physical_device:CPU:0", "CPU")] + [
        PhysicalDevice(f"/physical_device:IPU:{index}", "IPU") for index in range(system.SYSTEMS[system.system_name()])
    ]
    return [d for d in devices if device_type is None or d.device_type == str(device_type).upper()]


def list_logical_devices(device_type=None) -> list:
    """The CPU, and ``/device:IPU:0`` once ``configure_ipu_system`` has attached IPUs."""
    devices = [LogicalDevice("/device:CPU:0", "CPU")]
    if system.current() is not None:
        devices.append(LogicalDevice("/device:IPU:0", "IPU"))
    return [d for d in devices if device_type is None or d.device_type == str(device_type).upper()]


def set_memory_growth(device, enable) -> None:
    """TensorFlow's GPU option; there is no GPU here, so, as TensorFlow does for other devices, it is an error."""
    raise ValueError(f"Cannot set memory growth on non-GPU devices ({device}); ipu-teach simulates IPUs, not GPUs")


def run_functions_eagerly(run_eagerly) -> None:
    """Accepted: functions decorated with ``tf.function`` always run eagerly on ipu-teach."""


def functions_run_eagerly() -> bool:
    return True


experimental = SimpleNamespace(
    list_physical_devices=list_physical_devices,
    list_logical_devices=list_logical_devices,
    set_memory_growth=set_memory_growth,
)
