"""The tile-memory explorer's tile control: a slider and a number box that takes a typed tile index."""

import pytest

from ipu_teach.examples import small_report
from ipu_teach.widgets import TileMemoryExplorer

pytest.importorskip("ipywidgets")


@pytest.fixture(scope="module")
def small():
    return small_report()  # a Dense model trained on 16 tiles, profiled


def test_typing_a_tile_index_in_the_number_box_shows_that_tile(small):
    explorer = TileMemoryExplorer(small)
    box, slider = explorer.tile_number, explorer.tile
    assert box.value == slider.value and (box.min, box.max) == (0, 15) and "0 to 15" in box.tooltip
    first = explorer.image.value
    box.value = 9 if slider.value != 9 else 10  # what typing a number and pressing Enter does
    assert slider.value == box.value and f"tile {box.value}:" in explorer.caption.value
    assert explorer.figure.axes[1].get_title().startswith(f"tile {box.value}:") and explorer.image.value != first
    slider.value = 3  # the box follows the slider
    assert box.value == 3


def test_a_typed_tile_beyond_the_last_is_the_last_tile(small):
    explorer = TileMemoryExplorer(small)
    explorer.tile_number.value = 99
    assert explorer.tile_number.value == explorer.tile.value == 15 and "tile 15:" in explorer.caption.value


def test_the_number_box_sits_beside_the_slider_and_is_its_readout(small):
    import ipywidgets

    explorer = TileMemoryExplorer(small)
    row = explorer.widget.children[0]
    (group,) = [child for child in row.children if isinstance(child, ipywidgets.HBox)]
    assert group.children == (explorer.tile, explorer.tile_number)
    assert explorer.tile.readout is False  # one number on screen, the one a learner can type in
    drawn, draw = [], explorer.draw
    explorer.draw = lambda figure: drawn.append(explorer.tile.value) or draw(figure)
    explorer.tile_number.value = 6 if explorer.tile.value != 6 else 7
    assert drawn == [explorer.tile_number.value]  # one redraw per typed tile, none from the box itself
