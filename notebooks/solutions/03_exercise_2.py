# Exercise 2 (solution): multi-IPU devices come in powers of two, so 3 IPUs is an error: ask for 2
# or 4. An IPU-POD16 has 16 IPUs, so 32 is an error too: pick a bigger simulated system first.
# The notebook's IPUs and simulated system are back afterwards.
from ipu_teach import ipu

errors = {}
with ipu.system.restored_afterwards():
    for num_ipus_tried in (3, 32):
        tried = ipu.config.IPUConfig()
        tried.auto_select_ipus = num_ipus_tried
        try:
            tried.configure_ipu_system()
        except ValueError as error:
            errors[num_ipus_tried] = str(error)
            print(f"auto_select_ipus={num_ipus_tried}: {error}")

    # The fixes: a power of two, and an IPU-POD64 for 32 IPUs.
    four = ipu.config.IPUConfig()
    four.auto_select_ipus = 4
    four.configure_ipu_system()
    print("auto_select_ipus=4 on the IPU-POD16: attached", ipu.system.current().num_ipus, "IPUs")

    ipu.system.use_system("IPU-POD64")
    thirty_two = ipu.config.IPUConfig()
    thirty_two.auto_select_ipus = 32
    thirty_two.configure_ipu_system()
    print("auto_select_ipus=32 on the IPU-POD64: attached", ipu.system.current().num_ipus, "IPUs")
print("afterwards: the", ipu.system.system_name(), "again, with the notebook's IPUs")
