"""Hypothesis strategies shared by the autograd tests: small shapes, conv and pool geometries."""

from hypothesis import strategies as st

seeds = st.integers(0, 2**32 - 1)
shapes = st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple)
paddings = st.sampled_from(["valid", "same"])


@st.composite
def conv_geometry(draw):
    """An NHWC input and HWIO kernel that fit: 'same' always does; 'valid' needs the kernel to fit."""
    padding = draw(paddings)
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    low_h, low_w = (kh, kw) if padding == "valid" else (1, 1)
    return dict(
        n=draw(st.integers(1, 2)),
        h=draw(st.integers(low_h, 6)),
        w=draw(st.integers(low_w, 6)),
        c=draw(st.integers(1, 2)),
        kh=kh,
        kw=kw,
        filters=draw(st.integers(1, 3)),
        strides=(draw(st.integers(1, 3)), draw(st.integers(1, 3))),
        padding=padding,
    )


@st.composite
def pool_geometry(draw):
    """Pool windows that may overlap (stride < pool), skip values (stride > pool) or pad unevenly."""
    padding = draw(paddings)
    pool = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    low_h, low_w = pool if padding == "valid" else (1, 1)
    strides = draw(st.one_of(st.none(), st.tuples(st.integers(1, 3), st.integers(1, 3))))
    shape = (draw(st.integers(1, 2)), draw(st.integers(low_h, 6)), draw(st.integers(low_w, 6)), draw(st.integers(1, 2)))
    return shape, dict(pool_size=pool, strides=strides, padding=padding)
