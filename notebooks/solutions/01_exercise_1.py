# Exercise 1 (solution): what make_divisible drops. 60,000 = 937 x 64 + 32 and 10,000 = 156 x 64 + 16:
# the tutorial loses 32 training and 16 test images (its text says 48, but its own output shows
# 156 evaluation steps of 64 = 9,984 images). Large batches drop more, up to batch_size - 1 images.


def make_divisible(number, divisor):
    return number - number % divisor


DATA_SETS = {"full MNIST": (60_000, 10_000), "bundled subset": (10_000, 2_560)}
BATCH_SIZES = (32, 64, 100, 128)

print(f"{'data':<16}{'batch':>6}{'train dropped':>15}{'test dropped':>14}")
for name, (train, test) in DATA_SETS.items():
    for batch_size in BATCH_SIZES:
        print(
            f"{name:<16}{batch_size:>6}{train - make_divisible(train, batch_size):>15}"
            f"{test - make_divisible(test, batch_size):>14}"
        )
