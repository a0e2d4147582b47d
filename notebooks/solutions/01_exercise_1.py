# Exercise 1 (solution): what make_divisible drops. 60,000 = 937 x 64 + 32 and 10,000 = 156 x 64 + 16:
# the tutorial loses 32 training and 16 test images (its text says 48, but its own output shows
# 156 evaluation steps of 64 = 9,984 images). Large batches drop more, up to batch_size - 1 images.


def dropped(number, divisor):
    """The images make_divisible(number, divisor) leaves out: the remainder."""
    return number % divisor


DATA_SETS = {"full MNIST": (60_000, 10_000), "bundled subset": (10_000, 2_560)}
BATCH_SIZES = (32, 64, 100, 128)

print(f"{'data':<16}{'batch':>6}{'train dropped':>15}{'test dropped':>14}")
for data_set, (train_images, test_images) in DATA_SETS.items():
    for batch in BATCH_SIZES:
        print(f"{data_set:<16}{batch:>6}{dropped(train_images, batch):>15}{dropped(test_images, batch):>14}")
