"""``keras.utils.Sequence``: a dataset of batches by index, that ``fit`` / ``evaluate`` / ``predict`` accept."""


class Sequence:
    """Subclass it with ``__getitem__(index)`` returning batch ``index`` (``x`` or ``(x, y)``) and ``__len__``
    returning the number of batches. ``fit`` calls ``on_epoch_end`` after every epoch and, with
    ``shuffle=True`` (its default), visits the batches in a new random order each epoch, as Keras does."""

    def __getitem__(self, index):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def on_epoch_end(self):
        """Called after every epoch; override to change the data between epochs."""

    def __iter__(self):
        for index in range(len(self)):
            yield self[index]
