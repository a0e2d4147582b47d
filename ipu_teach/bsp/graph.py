"""The Poplar-like graph: tensors mapped to tiles, compute sets of vertices, host streams.

A :class:`Tensor` is a view (an index array) into a variable's flat storage, so slices can be
mapped and connected like Poplar tensors. Mapping updates per-tile memory at once and raises
:class:`TileOutOfMemoryError` when a tile's SRAM would overflow.
"""

from __future__ import annotations

import numpy as np

from .codelets import Codelet
from .compute import VERTEX_OVERHEAD_CYCLES
from .errors import GraphError
from .mapping import UNMAPPED, bytes_per_tile, check_tiles_in_range, intervals, linear_tile_of_element
from .memory import check_tile_memory


class GraphVariable:
    """Storage of one variable of a Poplar graph (``Graph.add_variable``, Poplar's ``addVariable``): dtype, shape,
    tile of each element, initial values. Its tensors are views of it."""

    def __init__(self, graph, name, dtype, shape, initial):
        self.graph, self.name, self.dtype, self.shape = graph, name, np.dtype(dtype), tuple(shape)
        self.size = int(np.prod(self.shape, dtype=np.int64))
        self.tile_of_element = np.full(self.size, UNMAPPED, dtype=np.int64)
        self.initial = initial
        self.is_constant = initial is not None


class Tensor:
    """A view of a variable: ``indices`` holds the flat element numbers this tensor covers."""

    def __init__(self, variable: GraphVariable, indices: np.ndarray):
        self.variable, self.indices = variable, indices

    shape = property(lambda self: self.indices.shape)
    size = property(lambda self: self.indices.size)
    dtype = property(lambda self: self.variable.dtype)
    nbytes = property(lambda self: self.indices.size * self.variable.dtype.itemsize)

    @property
    def name(self):
        whole = (
            self.indices.shape == self.variable.shape and (self.indices.ravel() == np.arange(self.variable.size)).all()
        )
        return self.variable.name if whole else f"{self.variable.name}[view {self.shape}]"

    def __getitem__(self, key):
        try:
            return Tensor(self.variable, self.indices[key])
        except IndexError as error:
            raise GraphError(
                f"tensor {self.name!r} with shape {self.shape}: index {key!r} is invalid ({error})"
            ) from None

    def reshape(self, *shape):
        try:
            return Tensor(self.variable, self.indices.reshape(*shape))
        except ValueError:
            raise GraphError(f"tensor {self.name!r} of shape {self.shape} cannot be reshaped to {shape}") from None

    def flatten(self):
        return self.reshape(-1)

    def __repr__(self):
        return f"Tensor({self.name!r}, shape={self.shape}, dtype={self.dtype})"


class Vertex:
    """One vertex: a codelet instance on one tile with tensors connected to its fields."""

    def __init__(self, compute_set, codelet: Codelet, index: int):
        self.compute_set, self.codelet, self.index = compute_set, codelet, index
        self.tile, self.connections, self.cycles = None, {}, None

    @property
    def name(self):
        return f"vertex {self.index} ({self.codelet.name}) of compute set {self.compute_set.name!r}"

    def estimate(self) -> int:
        """Cycles of this vertex: set_perf_estimate's value, else the codelet's estimate."""
        if self.cycles is not None:
            return self.cycles
        touched = sum(tensor.size for tensor in self.connections.values())
        return self.codelet.estimate(touched, VERTEX_OVERHEAD_CYCLES)

    def __repr__(self):
        return f"Vertex({self.name}, tile={self.tile})"


class ComputeSet:
    """A named set of vertices that run in parallel in one superstep."""

    def __init__(self, graph, name):
        self.graph, self.name, self.vertices = graph, name, []

    def __repr__(self):
        return f"ComputeSet({self.name!r}, {len(self.vertices)} vertices)"


class DataStream:
    """A host FIFO of ``num_elements`` per transfer; the Engine connects a host buffer to it by name."""

    def __init__(self, name, dtype, num_elements, to_device: bool):
        self.name, self.dtype, self.num_elements, self.to_device = name, np.dtype(dtype), num_elements, to_device
        self.shape, self.size = (num_elements,), num_elements

    def __repr__(self):
        return (
            f"DataStream({self.name!r}, {'host->device' if self.to_device else 'device->host'}, "
            f"{self.num_elements} x {self.dtype})"
        )


class Graph:
    """Tensors, their tile mapping and the vertices that compute on them, for one device (``poplar::Graph``).

    On an IPU every tensor lives in the SRAM of the tiles it is mapped to, and every vertex runs on one
    tile, reading only that tile's memory: the graph is where that placement is decided. An
    ``Engine`` then runs its programs and costs them.

    Args:
      device: The device the graph is for, from ``poplar.IPUModel(...).create_device()``.

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
    >>> graph.num_tiles
    4
    """

    def __init__(self, device):
        self.device = device
        self.num_tiles = device.num_tiles
        self.variables, self.compute_sets, self.streams = [], [], {}
        self._bytes = {}

    # -- tensors ------------------------------------------------------------------------------
    def add_variable(self, dtype, shape, name=None) -> Tensor:
        """Adds a new tensor of ``shape``, zero-initialised and not yet mapped to any tile (``addVariable``).

        Every tensor must be mapped (``set_tile_mapping``, ``map_tensor_linearly``) before an Engine runs.

        Args:
          dtype: The element type, e.g. ``"float32"``.
          shape: Tuple of ints (or an int), the tensor's shape.
          name: Optional name, shown in errors and memory figures.

        Returns:
          The new ``Tensor``; indexing it (``v[0]``) gives a slice to map or connect.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (4, 3), name="v")
        >>> v.shape, graph.get_tile_mapping(v)
        ((4, 3), [(-1, 0, 12)])
        """
        return self._add(dtype, shape, name, initial=None)

    def add_constant(self, dtype, shape, value, name=None) -> Tensor:
        """Adds a tensor holding ``value`` (broadcast to ``shape``); it still needs a tile mapping (``addConstant``).

        Args:
          dtype: The element type, e.g. ``"float32"``.
          shape: Tuple of ints (``()`` for a scalar).
          value: The value, broadcast to ``shape``.
          name: Optional name.

        Returns:
          The new ``Tensor``.

        Raises:
          GraphError: if ``value`` does not broadcast to ``shape``.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> a = graph.add_constant("float32", (), 3.0, "a")
        >>> graph.set_tile_mapping(a, 0)
        >>> graph.bytes_per_tile().tolist()
        [4, 0, 0, 0]
        """
        shape = self._check_shape(shape, name or "constant")
        try:
            initial = np.broadcast_to(np.asarray(value, dtype=dtype), shape).ravel().copy()
        except ValueError:
            raise GraphError(
                f"constant {name!r}: value of shape {np.shape(value)} does not fit shape {shape}"
            ) from None
        return self._add(dtype, shape, name, initial=initial)

    def _check_shape(self, shape, name):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if any(not isinstance(n, (int, np.integer)) or n < 0 for n in shape):
            raise GraphError(f"tensor {name!r}: shape must be non-negative integers, got {shape}")
        return tuple(int(n) for n in shape)

    def _add(self, dtype, shape, name, initial):
        name = name or f"t{len(self.variables)}"
        if any(v.name == name for v in self.variables):
            raise GraphError(f"a tensor named {name!r} already exists in this graph; choose another name")
        variable = GraphVariable(self, name, dtype, self._check_shape(shape, name), initial)
        self.variables.append(variable)
        return Tensor(variable, np.arange(variable.size, dtype=np.int64).reshape(variable.shape))

    # -- mapping ------------------------------------------------------------------------------
    def set_tile_mapping(self, tensor_or_vertex, tile):
        """Puts a whole tensor (or a slice of it) on ``tile``, or places a vertex on ``tile`` (``setTileMapping``).

        Args:
          tensor_or_vertex: A Tensor of this graph (or a slice), or a Vertex.
          tile: The tile index.

        Raises:
          TileOutOfMemoryError: if the tile's SRAM cannot hold it (nothing is changed then).
          GraphError: for a tile out of range or a tensor of another graph.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (2, 3), "v")
        >>> graph.set_tile_mapping(v[0], 0)
        >>> graph.set_tile_mapping(v[1], 3)
        >>> graph.get_tile_mapping(v)
        [(0, 0, 3), (3, 3, 6)]
        """
        if isinstance(tensor_or_vertex, Vertex):
            tensor_or_vertex.tile = int(check_tiles_in_range(tile, self.num_tiles, tensor_or_vertex.name))
            return
        tensor = self._own(tensor_or_vertex)
        tile = check_tiles_in_range(tile, self.num_tiles, f"set_tile_mapping of tensor {tensor.name!r}")
        self._remap(tensor, np.broadcast_to(tile, (tensor.size,)))

    def map_tensor_linearly(self, tensor, grain: int = 1, min_elements_per_tile: int = 0):
        """Spreads ``tensor`` evenly over all tiles in contiguous runs of whole grains (``poputil::mapTensorLinearly``).

        The usual cure for a tensor too large for one tile, and the way to let every tile work on its share.

        Args:
          tensor: A Tensor of this graph.
          grain: Integer, elements that stay together on one tile (e.g. a row). Default: 1.
          min_elements_per_tile: Integer, the fewest elements a tile that holds any gets. Default: 0.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (4, 3), "v")
        >>> graph.map_tensor_linearly(v, grain=3)        # one row of 3 per tile
        >>> graph.get_tile_mapping(v)
        [(0, 0, 3), (1, 3, 6), (2, 6, 9), (3, 9, 12)]
        """
        tensor = self._own(tensor)
        self._remap(tensor, linear_tile_of_element(tensor.size, self.num_tiles, grain, min_elements_per_tile))

    def _remap(self, tensor, tiles):
        variable = tensor.variable
        proposed = variable.tile_of_element.copy()
        proposed[tensor.indices.ravel()] = tiles
        bytes_now = dict(self._bytes)
        bytes_now[variable.name] = bytes_per_tile(proposed, variable.dtype.itemsize, self.num_tiles)
        check_tile_memory(bytes_now, self.device.spec.sram_per_tile)
        variable.tile_of_element, self._bytes = proposed, bytes_now

    def get_tile_mapping(self, tensor) -> list:
        """Returns where the tensor lives: ``[(tile, start, stop), ...]`` runs over its flat elements
        (``getTileMapping``).

        Tile -1 marks elements not mapped yet.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (6,), "v")
        >>> graph.set_tile_mapping(v[:4], 1)
        >>> graph.get_tile_mapping(v)
        [(1, 0, 4), (-1, 4, 6)]
        """
        tensor = self._own(tensor)
        return intervals(tensor.variable.tile_of_element[tensor.indices.ravel()])

    def tile_of(self, tensor) -> np.ndarray:
        """Returns the tile of each element of ``tensor``, an array shaped like it.

        Handy to place each vertex on the tile that holds its data, so it needs no exchange.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (8,), "v")
        >>> graph.map_tensor_linearly(v)
        >>> graph.tile_of(v).tolist()
        [0, 0, 1, 1, 2, 2, 3, 3]
        """
        tensor = self._own(tensor)
        return tensor.variable.tile_of_element[tensor.indices]

    def bytes_per_tile(self) -> np.ndarray:
        """Returns the bytes mapped to every tile, an array of shape ``(tiles,)``.

        The check of a mapping's balance: one tile much fuller than the rest runs out of SRAM first.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (4, 3), "v")
        >>> graph.map_tensor_linearly(v, grain=3)
        >>> graph.bytes_per_tile().tolist()
        [12, 12, 12, 12]
        """
        return sum(self._bytes.values(), np.zeros(self.num_tiles, dtype=np.int64))

    def memory_by_tensor(self) -> dict:
        """``{tensor name: bytes per tile}`` for every mapped tensor."""
        return dict(self._bytes)

    def _own(self, tensor):
        if not isinstance(tensor, Tensor):
            raise GraphError(f"expected a Tensor of this graph, got {type(tensor).__name__}")
        if tensor.variable.graph is not self:
            raise GraphError(f"tensor {tensor.name!r} belongs to another graph")
        return tensor

    # -- compute ------------------------------------------------------------------------------
    def add_compute_set(self, name: str) -> ComputeSet:
        """Adds a new, empty compute set: the vertices that run in parallel in one superstep (``addComputeSet``).

        ``poplar.Execute(compute_set)`` runs it: a sync, the exchange of the vertices' remote inputs,
        then the compute phase, as in the IPU's bulk-synchronous parallel model.

        Args:
          name: The compute set's name, shown in timelines and profiles.

        Returns:
          The new ``ComputeSet``.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> graph.add_compute_set("add one")
        ComputeSet('add one', 0 vertices)
        """
        compute_set = ComputeSet(self, name)
        self.compute_sets.append(compute_set)
        return compute_set

    def add_vertex(self, compute_set: ComputeSet, codelet: Codelet, connections: dict = None, tile=None) -> Vertex:
        """Adds a vertex running ``codelet`` to ``compute_set``, optionally connecting its fields and placing it.

        A vertex is one piece of work on one tile; its fields connect to tensors (or slices). Inputs held on
        other tiles arrive by exchange before the compute phase.

        Args:
          compute_set: A compute set of this graph.
          codelet: A function decorated with ``@poplar.codelet``.
          connections: Optional dict of field name to Tensor. Default: None, connect later.
          tile: Optional tile to place the vertex on. Default: None, place later.

        Returns:
          The new ``Vertex``.

        Raises:
          GraphError: for a compute set of another graph or a function that is not a codelet.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (4,), "v")
        >>> graph.map_tensor_linearly(v)
        >>> @poplar.codelet(inouts={"x": ""})
        ... def add_one(x):
        ...     return x + 1
        >>> compute_set = graph.add_compute_set("add one")
        >>> graph.add_vertex(compute_set, add_one, {"x": v[3]}, tile=3)
        Vertex(vertex 0 (add_one) of compute set 'add one', tile=3)
        """
        if not isinstance(compute_set, ComputeSet) or compute_set.graph is not self:
            raise GraphError(f"add_vertex needs a compute set of this graph, got {compute_set!r}")
        if not isinstance(codelet, Codelet):
            raise GraphError(f"add_vertex needs a codelet (a function decorated with @codelet), got {codelet!r}")
        vertex = Vertex(compute_set, codelet, len(compute_set.vertices))
        compute_set.vertices.append(vertex)
        for field, tensor in (connections or {}).items():
            self.connect(vertex, field, tensor)
        if tile is not None:
            self.set_tile_mapping(vertex, tile)
        return vertex

    def connect(self, vertex: Vertex, field: str, tensor: Tensor):
        """Connect ``tensor`` to ``field`` of ``vertex``; shapes are checked against the codelet."""
        if field not in vertex.codelet.fields:
            raise GraphError(
                f"{vertex.name}: codelet {vertex.codelet.name!r} has no field {field!r}; "
                f"its fields are {list(vertex.codelet.fields)}"
            )
        tensor = self._own(tensor)
        shapes = {name: t.shape for name, t in vertex.connections.items()}
        shapes[field] = tensor.shape
        vertex.codelet.check_shapes(shapes, vertex.name)
        vertex.connections[field] = tensor

    def set_perf_estimate(self, vertex: Vertex, cycles: int):
        """Declares how many cycles ``vertex`` takes on its worker thread (``setPerfEstimate``).

        Overrides the cycle count estimated from the codelet. The six worker threads of a tile are
        barrel-scheduled (each issues one instruction every 6 tile cycles), so one vertex alone takes 6 times
        its cycles in tile cycles, and six such vertices on six workers take no longer than one.

        Args:
          vertex: A Vertex of this graph.
          cycles: Integer >= 0, the vertex's cycles.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> graph = poplar.Graph(poplar.IPUModel(tiles_per_ipu=4).create_device())
        >>> v = graph.add_variable("float32", (4,), "v")
        >>> graph.set_tile_mapping(v, 0)
        >>> @poplar.codelet(inouts={"x": ""})
        ... def double(x):
        ...     return 2 * x
        >>> compute_set = graph.add_compute_set("double")
        >>> vertex = graph.add_vertex(compute_set, double, {"x": v[0]}, tile=0)
        >>> graph.set_perf_estimate(vertex, 100)
        >>> vertex.cycles
        100
        """
        if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)) or cycles < 0:
            raise GraphError(f"{vertex.name}: perf estimate must be a non-negative integer, got {cycles!r}")
        vertex.cycles = int(cycles)

    # -- host streams -------------------------------------------------------------------------
    def add_host_to_device_fifo(self, name, dtype, num_elements) -> DataStream:
        """A stream the host fills; ``Copy(stream, tensor)`` moves one transfer onto the tiles."""
        return self._add_stream(name, dtype, num_elements, to_device=True)

    def add_device_to_host_fifo(self, name, dtype, num_elements) -> DataStream:
        """A stream to the host; ``Copy(tensor, stream)`` sends one transfer."""
        return self._add_stream(name, dtype, num_elements, to_device=False)

    def _add_stream(self, name, dtype, num_elements, to_device):
        if name in self.streams:
            raise GraphError(f"a stream named {name!r} already exists in this graph; choose another name")
        if isinstance(num_elements, bool) or not isinstance(num_elements, (int, np.integer)) or num_elements <= 0:
            raise GraphError(f"stream {name!r}: num_elements must be a positive integer, got {num_elements!r}")
        stream = self.streams[name] = DataStream(name, dtype, int(num_elements), to_device)
        return stream
