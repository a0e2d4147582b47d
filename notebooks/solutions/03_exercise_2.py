# Exercise 2 (solution): multi-IPU devices come in powers of two, so 3 IPUs is an error: ask for 2
# or 4. An IPU-POD16 has 16 IPUs, so 32 is an error too: pick a bigger simulated system first.
from ipu_teach import ipu

errors = {}
for num_ipus in (3, 32):
    config = ipu.config.IPUConfig()
    config.auto_select_ipus = num_ipus
    try:
        config.configure_ipu_system()
    except ValueError as error:
        errors[num_ipus] = str(error)
        print(f"auto_select_ipus={num_ipus}: {error}")

# The fixes: a power of two, and an IPU-POD64 for 32 IPUs.
config = ipu.config.IPUConfig()
config.auto_select_ipus = 4
config.configure_ipu_system()
print("auto_select_ipus=4 on the IPU-POD16: attached", ipu.system.current().num_ipus, "IPUs")

ipu.system.use_system("IPU-POD64")
config = ipu.config.IPUConfig()
config.auto_select_ipus = 32
config.configure_ipu_system()
print("auto_select_ipus=32 on the IPU-POD64: attached", ipu.system.current().num_ipus, "IPUs")
ipu.system.use_system("IPU-POD16")  # back to the default system
