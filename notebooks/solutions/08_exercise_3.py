# Exercise 3 (solution): a call costs the host's call (fixed) plus the device's time, which grows with the
# iterations, about linearly: seconds ~ host + device_per_iteration x n. Two compiled models give the per-iteration
# time; the host is under 5% of a call once host / seconds < 0.05, i.e. n > (host / 0.05 - host) / per_iteration.
# The device is not exactly linear (with more iterations the streams overlap more), so the prediction is then
# checked against compiled models, one iteration at a time, until the count before it is over 5%.
# The notebook's IPUs are back afterwards.
import math

with ipu.system.restored_afterwards():
    host_shares = {}

    def host_share(count):
        if count not in host_shares:
            executable = compiled(poptorch.Options().deviceIterations(count)).get_ipu_executable()
            host_shares[count] = host_call / executable.seconds_per_execution
        return host_shares[count]

    low, high = 100, 400
    per_iteration = (host_call / host_share(high) - host_call / host_share(low)) / (high - low)
    needed = math.floor((host_call / 0.05 - host_call) / per_iteration) + 1
    print(f"device time per iteration: {per_iteration * 1e6:.1f} us; predicted: deviceIterations({needed})")
    while host_share(needed) >= 0.05:
        needed += 1
    while host_share(needed - 1) < 0.05:
        needed -= 1
    for count in (needed - 1, needed):
        print(f"deviceIterations({count}): the host's call is {host_share(count):.3%} of a call")
    print(f"smallest: deviceIterations({needed})")
