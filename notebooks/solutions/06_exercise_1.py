# Predict, then check: what fp16 gives for 2048 + 1, 2048 + 2, and a running sum of 0.01 added 10,000 times.
import numpy as np

print(
    "2048 + 1 in fp16:", float(np.float16(2048) + np.float16(1))
)  # the spacing of fp16 at 2048 is 2: 2049 rounds to 2048
print("2048 + 2 in fp16:", float(np.float16(2048) + np.float16(2)))
total = np.float16(0)
for _ in range(10_000):
    total = np.float16(total + np.float16(0.01))
print("0.01 added 10,000 times in fp16:", float(total), "(exact: 100)")
# The sum stalls once 0.01 is under half the spacing of fp16 at the running total (at 32 the spacing is 1/32).
