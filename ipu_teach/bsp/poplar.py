"""A Poplar-like API on the BSP engine, for the course: devices, graphs, vertices, programs, Engine.

Mirrors Poplar's C++ names in Python style (``add_variable``, ``set_tile_mapping``, ...). Codelets
are numpy functions (see :mod:`.codelets`). A vertex reads and writes only its own tile's memory:
inputs held on other tiles arrive by exchange, and that exchange is costed. Numerics are plain numpy,
so results equal numpy's; the cost of each step comes from the low-level :class:`bsp.CostEngine`.

Simplification: on a device of several IPUs, tiles are numbered across IPUs and an input held on
another IPU is costed like on-chip exchange (real Poplar sends it over IPU-Links).

Notebook 00 builds a graph step by step (``Graph.add_vertex`` shows each step); ``examples.add_one_graph``
is such a graph, run here once with the cost of its one superstep.

Example:

>>> from ipu_teach.bsp import poplar
>>> from ipu_teach.examples import add_one_graph
>>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
>>> engine = poplar.Engine(graph, poplar.Execute(compute_set))
>>> print(engine.run().summary())
superstep                      runs   compute    sync  exchange    cycles
add one                           1        66     150         0       216
total: 216 cycles = 0.162 us simulated on GC200 (Mk2) (4 tiles); compute 66, sync 150, exchange 0; tile utilisation
30.6%
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..hardware import MK2
from . import programs as bsp_programs
from .codelets import Codelet, codelet
from .compute import CostedComputeSet, tile_cycles_from_vertices
from .engine import CostEngine
from .errors import GraphError, TileOutOfMemoryError
from .exchange import Exchange, exchange_from_transfers
from .graph import ComputeSet, DataStream, Graph, Tensor, Vertex
from .mapping import UNMAPPED, check_positive_count
from .programs import Program, Repeat, Sequence

MAX_RUN_SUPERSTEPS = 1_000_000
"""The most supersteps ``Engine.run`` computes values for (its cost engine counts any number)."""

__all__ = [
    "IPUModel",
    "Device",
    "Graph",
    "Tensor",
    "Vertex",
    "ComputeSet",
    "DataStream",
    "Codelet",
    "codelet",
    "Execute",
    "Copy",
    "Sequence",
    "Repeat",
    "Engine",
    "GraphError",
    "TileOutOfMemoryError",
]


@dataclass(frozen=True)
class Device:
    """A simulated device: ``num_ipus`` IPUs of ``spec``; tiles are numbered 0..num_tiles-1 across IPUs."""

    spec: object
    num_ipus: int = 1

    @property
    def num_tiles(self) -> int:
        return self.spec.tiles * self.num_ipus

    @property
    def tiles_per_ipu(self) -> int:
        return self.spec.tiles


class IPUModel:
    """Describes a simulated IPU (tile count, number of IPUs) and creates the device, like ``poplar::IPUModel``.

    Poplar's IPUModel runs a program on the host as if on an IPU; here every figure comes from
    ``ipu_teach.hardware`` (a Mk2 by default), with as few tiles as a small example needs.

    Args:
      tiles_per_ipu: Integer, tiles of each IPU. Default: None, all 1,472 of a Mk2.
      num_ipus: Integer, the number of IPUs of the device. Default: 1.
      spec: The ``IPUSpec`` to simulate. Default: ``hardware.MK2``.

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> device = poplar.IPUModel(tiles_per_ipu=16, num_ipus=2).create_device()
    >>> device.num_tiles, device.spec.sram_per_tile
    (32, 638976)
    """

    def __init__(self, tiles_per_ipu: int = None, num_ipus: int = 1, spec=MK2):
        self.num_ipus = check_positive_count(num_ipus, "IPUModel: num_ipus")
        self.spec = (
            spec
            if tiles_per_ipu is None
            else spec.with_tiles(check_positive_count(tiles_per_ipu, "IPUModel: tiles_per_ipu"))
        )

    def create_device(self) -> Device:
        """Returns the simulated device this model describes, for a ``poplar.Graph`` (``createDevice``).

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> poplar.IPUModel(tiles_per_ipu=4).create_device().num_tiles
        4
        """
        return Device(self.spec, self.num_ipus)


class Execute(Program):
    """A program that runs a compute set: one superstep (sync, exchange the vertices' remote inputs, compute).

    ``poplar::program::Execute``. Combine programs with ``poplar.Repeat(count, program)`` and
    ``poplar.Sequence(a, b, ...)``; pass them to an ``Engine``.

    Args:
      compute_set: The ``ComputeSet`` to run.

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> from ipu_teach.examples import add_one_graph
    >>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
    >>> engine = poplar.Engine(graph, poplar.Repeat(3, poplar.Execute(compute_set)))
    >>> timeline = engine.run()
    >>> engine.read_tensor(v)
    array([3., 3., 3., 3.], dtype=float32)
    """

    def __init__(self, compute_set: ComputeSet):
        if not isinstance(compute_set, ComputeSet):
            raise GraphError(f"Execute needs a compute set from graph.add_compute_set, got {compute_set!r}")
        self.compute_set, self.label = compute_set, compute_set.name


class Copy(Program):
    """Copy a tensor to a tensor (an exchange), a host stream to a tensor, or a tensor to a host stream."""

    def __init__(self, source, destination, label: str = None):
        for end in (source, destination):
            if not isinstance(end, (Tensor, DataStream)):
                raise GraphError(f"Copy copies tensors and data streams, got {type(end).__name__}")
        if isinstance(source, DataStream) and isinstance(destination, DataStream):
            raise GraphError(
                f"Copy from stream {source.name!r} to stream {destination.name!r}: one end must be a tensor"
            )
        for stream, wanted in ((source, True), (destination, False)):
            if isinstance(stream, DataStream) and stream.to_device != wanted:
                raise GraphError(
                    f"stream {stream.name!r} goes {'host->device' if stream.to_device else 'device->host'}; "
                    f"it cannot be the {'source' if wanted else 'destination'} of this Copy"
                )
        if not _copy_shapes_agree(source, destination):
            raise GraphError(
                f"Copy from {source.name!r} to {destination.name!r}: mismatched shapes "
                f"{source.shape} and {destination.shape}"
            )
        self.source, self.destination = source, destination
        self.label = label or f"copy {source.name} -> {destination.name}"


def _runs_a_step(program) -> bool:
    """Whether running ``program`` runs at least one Execute or Copy (an empty loop is skipped, not counted out)."""
    if isinstance(program, Sequence):
        return any(_runs_a_step(child) for child in program.programs)
    if isinstance(program, Repeat):
        return program.count > 0 and _runs_a_step(program.body)
    return True


def _copy_shapes_agree(source, destination):
    """Tensor to tensor: same shape; with a stream: as many elements as one transfer."""
    if isinstance(source, Tensor) and isinstance(destination, Tensor):
        return source.shape == destination.shape
    return source.size == destination.size


class Engine:
    """Runs a graph's programs on the simulated device, like ``poplar::Engine``.

    Creating it checks the graph (every tensor mapped, every vertex placed and connected) and lowers the
    programs to supersteps; ``run(i)`` executes program ``i`` (numerics in numpy, so results equal
    numpy's; costs from the BSP engine) and returns its :class:`~ipu_teach.bsp.Timeline`, also kept as
    ``engine.timeline``. ``write_tensor`` and ``read_tensor`` move values between the host and device memory.

    Args:
      graph: The ``Graph``.
      programs: A program (``Execute``, ``Repeat``, ``Sequence``, ``Copy``) or a list of them.

    Raises:
      GraphError: for a graph that cannot run as built (the message names the tensor or vertex at fault).

    Example:

    >>> from ipu_teach.bsp import poplar
    >>> from ipu_teach.examples import add_one_graph
    >>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
    >>> engine = poplar.Engine(graph, poplar.Execute(compute_set))
    >>> engine.write_tensor(v, [1, 2, 3, 4])
    >>> timeline = engine.run()
    >>> engine.read_tensor(v)
    array([2., 3., 4., 5.], dtype=float32)
    """

    def __init__(self, graph: Graph, programs):
        if not isinstance(graph, Graph):
            raise GraphError(f"Engine needs a Graph, got {type(graph).__name__}")
        self.graph, self.device = graph, graph.device
        self.programs = list(programs) if isinstance(programs, (list, tuple)) else [programs]
        _check_mapped(graph)
        self._memory = {
            v.name: (v.initial.copy() if v.is_constant else np.zeros(v.size, v.dtype)) for v in graph.variables
        }
        self._streams, self._stream_position = {}, {}
        self._actions, self._lowered = {}, {}
        lowered = [self._lower(program) for program in self.programs]
        self._cost_engines = [CostEngine(p, self.device.spec, self.device.num_ipus) for p in lowered]
        self.timeline = None

    # -- host side ----------------------------------------------------------------------------
    def write_tensor(self, tensor: Tensor, values):
        """Writes ``values`` (broadcast to the tensor's shape) into device memory (``writeTensor``).

        Args:
          tensor: A Tensor of the engine's graph (or a slice).
          values: Array-like, broadcast to the tensor's shape and converted to its dtype.

        Raises:
          GraphError: if the values do not fit the tensor's shape.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> from ipu_teach.examples import add_one_graph
        >>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
        >>> engine = poplar.Engine(graph, poplar.Execute(compute_set))
        >>> engine.write_tensor(v[:2], 7)
        >>> engine.read_tensor(v)
        array([7., 7., 0., 0.], dtype=float32)
        """
        self._own(tensor)
        try:
            values = np.broadcast_to(np.asarray(values, dtype=tensor.dtype), tensor.shape)
        except ValueError:
            raise GraphError(
                f"write_tensor({tensor.name!r}): values of shape {np.shape(values)} do not fit "
                f"the tensor's shape {tensor.shape}"
            ) from None
        self._memory[tensor.variable.name][tensor.indices] = values

    def read_tensor(self, tensor: Tensor) -> np.ndarray:
        """Returns a copy of ``tensor``'s values in device memory (``readTensor``).

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> from ipu_teach.examples import add_one_graph
        >>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
        >>> engine = poplar.Engine(graph, poplar.Execute(compute_set))
        >>> timeline = engine.run()                        # variables start at zero
        >>> engine.read_tensor(v)
        array([1., 1., 1., 1.], dtype=float32)
        """
        self._own(tensor)
        return self._memory[tensor.variable.name][tensor.indices].copy()

    def connect_stream(self, name: str, buffer: np.ndarray):
        """Attach a host buffer to stream ``name``; transfers walk through it circularly."""
        stream = self.graph.streams.get(name)
        if stream is None:
            raise GraphError(f"no stream named {name!r}; the graph has {sorted(self.graph.streams)}")
        if not isinstance(buffer, np.ndarray) or buffer.size % stream.num_elements:
            raise GraphError(
                f"stream {name!r}: the buffer must be a numpy array holding a whole number of "
                f"transfers of {stream.num_elements} elements"
            )
        self._streams[name], self._stream_position[name] = buffer.reshape(-1), 0

    def run(self, program_index: int = 0):
        """Runs program ``program_index`` and returns its simulated Timeline (also kept as ``self.timeline``).

        The values change in device memory as numpy computes them; the timeline says what the run would
        cost on the IPU: per superstep, the cycles of compute, sync and exchange of every tile.

        Args:
          program_index: Integer, which of the engine's programs to run. Default: 0.

        Returns:
          The ``Timeline`` of the run (deterministic: the same program always gives the same cycles).

        Raises:
          GraphError: for a program index the engine does not have.

        Example:

        >>> from ipu_teach.bsp import poplar
        >>> from ipu_teach.examples import add_one_graph
        >>> graph, v, compute_set = add_one_graph()     # v: one float per tile; each vertex adds one
        >>> engine = poplar.Engine(graph, poplar.Execute(compute_set))
        >>> timeline = engine.run()
        >>> timeline.totals()
        {'compute': 66, 'sync': 150, 'exchange': 0}
        """
        if not 0 <= program_index < len(self.programs):
            raise GraphError(
                f"Engine.run: program {program_index} does not exist; this engine has {len(self.programs)} program(s)"
            )
        timeline = self._cost_engines[program_index].run()
        if timeline.supersteps > MAX_RUN_SUPERSTEPS:
            raise GraphError(
                f"Engine.run: program {program_index} runs {timeline.supersteps:,} supersteps, and this engine "
                f"computes the values of each one with numpy: more than {MAX_RUN_SUPERSTEPS:,} would not finish; "
                "use a smaller Repeat count (every iteration costs the same: multiply its cycles)"
            )
        self._execute(self.programs[program_index])
        self.timeline = timeline
        return self.timeline

    def _own(self, tensor):
        if not isinstance(tensor, Tensor) or tensor.variable.graph is not self.graph:
            raise GraphError(f"expected a tensor of this engine's graph, got {tensor!r}")

    # -- running ------------------------------------------------------------------------------
    def _execute(self, program):
        if isinstance(program, Sequence):
            for child in program.programs:
                self._execute(child)
        elif isinstance(program, Repeat):
            for _ in range(program.count if _runs_a_step(program.body) else 0):
                self._execute(program.body)
        else:
            self._actions[id(program)]()

    # -- lowering to the cost engine (checks happen here, when the engine is created) ---------
    def _lower(self, program):
        if isinstance(program, Sequence):
            return Sequence([self._lower(child) for child in program.programs], label=program.label)
        if isinstance(program, Repeat):
            return Repeat(program.count, self._lower(program.body), label=program.label)
        if id(program) not in self._lowered:
            if isinstance(program, Execute):
                self._lowered[id(program)], self._actions[id(program)] = self._lower_execute(program)
            elif isinstance(program, Copy):
                self._lowered[id(program)], self._actions[id(program)] = self._lower_copy(program)
            else:
                raise GraphError(f"poplar.Engine runs Execute, Copy, Sequence and Repeat; got {type(program).__name__}")
        return self._lowered[id(program)]

    def _lower_execute(self, program):
        compute_set = program.compute_set
        groups = _group_vertices(compute_set)
        spec, num_tiles = self.device.spec, self.device.num_tiles
        tiles = np.array([v.tile for v in compute_set.vertices], dtype=np.int64)
        cycles = np.array([v.estimate() for v in compute_set.vertices], dtype=np.int64)
        tile_cycles = tile_cycles_from_vertices(tiles, cycles, num_tiles, spec.threads_per_tile)
        _check_writes(compute_set, groups)
        exchange = _input_exchange(self.graph, compute_set.name, groups)
        costed = bsp_programs.ComputeSuperstep(
            CostedComputeSet(compute_set.name, tile_cycles.reshape(self.device.num_ipus, spec.tiles)),
            exchange=_per_ipu(exchange, self.device),
        )
        return costed, lambda: self._run_compute_set(groups)

    def _run_compute_set(self, groups):
        results = []
        for group in groups:
            arguments = {
                field: self._memory[group.variables[field].name][group.indices[field]]
                for field in group.codelet.readable
            }
            shapes = {field: group.indices[field].shape[1:] for field in group.codelet.writable}
            results.append((group, group.codelet.run(arguments, group.size, shapes)))
        for group, outputs in results:  # BSP: every vertex reads before any vertex writes
            for field, values in outputs.items():
                self._memory[group.variables[field].name][group.indices[field]] = values

    def _lower_copy(self, program):
        source, destination, device = program.source, program.destination, self.device
        if isinstance(source, Tensor) and isinstance(destination, Tensor):
            transfers = exchange_from_transfers(
                self.graph.tile_of(source).ravel(),
                self.graph.tile_of(destination).ravel(),
                source.dtype.itemsize,
                device.num_tiles,
                name=program.label,
                elements=source.indices.ravel(),
            )
            return (
                bsp_programs.ExchangeSuperstep(_per_ipu(transfers, device)),
                lambda: self._store(destination, self._memory[source.variable.name][source.indices]),
            )
        tensor, stream = (destination, source) if isinstance(source, DataStream) else (source, destination)
        ipu_of_element = self.graph.tile_of(tensor).ravel() // device.tiles_per_ipu
        nbytes = np.bincount(ipu_of_element, minlength=device.num_ipus) * tensor.dtype.itemsize
        if stream.to_device:
            return bsp_programs.HostToDevice(nbytes, label=program.label), lambda: self._store(
                tensor, self._next_transfer(stream).reshape(tensor.shape)
            )
        return bsp_programs.DeviceToHost(nbytes, label=program.label), lambda: self._send(tensor, stream)

    def _store(self, tensor, values):
        self._memory[tensor.variable.name][tensor.indices] = values

    def _transfer_slot(self, stream):
        buffer = self._streams.get(stream.name)
        if buffer is None:
            raise GraphError(
                f"stream {stream.name!r} has no host buffer; call engine.connect_stream"
                f"({stream.name!r}, array) before running"
            )
        start = self._stream_position[stream.name]
        self._stream_position[stream.name] = (start + stream.num_elements) % buffer.size
        return buffer, slice(start, start + stream.num_elements)

    def _next_transfer(self, stream):
        buffer, where = self._transfer_slot(stream)
        return buffer[where]

    def _send(self, tensor, stream):
        buffer, where = self._transfer_slot(stream)
        buffer[where] = self._memory[tensor.variable.name][tensor.indices].ravel()


@dataclass(frozen=True)
class _VertexGroup:
    """Vertices of one codelet whose fields connect the same variables with the same shapes: one call."""

    codelet: Codelet
    variables: dict  # field -> GraphVariable
    indices: dict  # field -> (vertices, *field shape) element numbers
    tiles: np.ndarray
    vertices: tuple

    @property
    def size(self):
        return len(self.vertices)


def _group_vertices(compute_set):
    buckets = {}
    for vertex in compute_set.vertices:
        missing = [field for field in vertex.codelet.fields if field not in vertex.connections]
        if missing:
            raise GraphError(
                f"{vertex.name}: field(s) {missing} are not connected; connect a tensor with "
                f"graph.connect(vertex, field, tensor) or add_vertex(..., connections={{...}})"
            )
        if vertex.tile is None:
            raise GraphError(
                f"{vertex.name} has no tile; pass tile= to add_vertex or call graph.set_tile_mapping(vertex, tile)"
            )
        key = (id(vertex.codelet),) + tuple(
            (field, id(vertex.connections[field].variable), vertex.connections[field].shape)
            for field in vertex.codelet.fields
        )
        buckets.setdefault(key, []).append(vertex)
    return [
        _VertexGroup(
            codelet=vs[0].codelet,
            variables={f: t.variable for f, t in vs[0].connections.items()},
            indices={f: np.stack([v.connections[f].indices for v in vs]) for f in vs[0].codelet.fields},
            tiles=np.array([v.tile for v in vs], dtype=np.int64),
            vertices=tuple(vs),
        )
        for vs in buckets.values()
    ]


def _check_mapped(graph):
    for variable in graph.variables:
        unmapped = int((variable.tile_of_element == UNMAPPED).sum())
        if unmapped:
            raise GraphError(
                f"tensor {variable.name!r} has {unmapped} of {variable.size} elements not mapped to any "
                f"tile; call graph.set_tile_mapping or graph.map_tensor_linearly before creating the Engine"
            )


def _tile_of(group, field):
    """The variable connected to ``field`` of the group, and the tile of each element the field touches."""
    variable = group.variables[field]
    return variable, variable.tile_of_element[group.indices[field]]


def _check_writes(compute_set, groups):
    written = []
    for group in groups:
        for field in group.codelet.writable:
            variable, owners = _tile_of(group, field)
            vertex_tiles = group.tiles.reshape((-1,) + (1,) * (owners.ndim - 1))
            wrong = np.argwhere(owners != vertex_tiles)
            if wrong.size:
                vertex = group.vertices[wrong[0][0]]
                raise GraphError(
                    f"{vertex.name} runs on tile {vertex.tile} but writes {field!r} to tensor "
                    f"{variable.name!r} held on tile {owners[tuple(wrong[0])]}; a vertex only writes "
                    f"its own tile's memory: map that output to tile {vertex.tile} or move the vertex"
                )
            written.append((variable.name, group.indices[field].ravel()))
    for name in {name for name, _ in written}:
        elements = np.concatenate([idx for n, idx in written if n == name])
        if np.unique(elements).size != elements.size:
            raise GraphError(
                f"compute set {compute_set.name!r}: several vertices write the same elements of "
                f"tensor {name!r}; give each vertex its own slice of the output"
            )


def _input_exchange(graph, name, groups):
    """Bytes each tile receives/sends so every vertex finds its inputs on its own tile (each element once per tile)."""
    offsets, total = {}, 0
    for variable in graph.variables:
        offsets[variable.name], total = total, total + variable.size
    destinations, sources, elements, sizes = [], [], [], []
    for group in groups:
        for field in group.codelet.readable:
            variable, owners = _tile_of(group, field)
            readers = np.broadcast_to(group.tiles.reshape((-1,) + (1,) * (owners.ndim - 1)), owners.shape)
            remote = owners != readers
            destinations.append(readers[remote])
            sources.append(owners[remote])
            elements.append(group.indices[field][remote] + offsets[variable.name])
            sizes.append(np.full(int(remote.sum()), variable.dtype.itemsize, dtype=np.int64))
    if not destinations:
        return Exchange(np.zeros(graph.num_tiles, dtype=np.int64), name=name)
    destinations, elements = np.concatenate(destinations), np.concatenate(elements)
    _, first = np.unique(destinations * max(total, 1) + elements, return_index=True)
    return exchange_from_transfers(
        np.concatenate(sources)[first],
        destinations[first],
        np.concatenate(sizes)[first],
        graph.num_tiles,
        name=name,
        elements=elements[first],
    )


def _per_ipu(exchange, device):
    shape = (device.num_ipus, device.tiles_per_ipu)
    return dataclasses.replace(exchange, received=exchange.received.reshape(shape), sent=exchange.sent.reshape(shape))
