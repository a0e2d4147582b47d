"""The public ``ipu_teach`` names the course uses: every module, class, function, method and property that the
code cells of ``notebooks/*.ipynb`` and the solutions in ``notebooks/solutions/`` reach, resolved by importing.

The code is read, not run (running every notebook takes minutes). A small abstract interpreter follows it:
imports bind real objects; attributes of real objects are resolved with ``getattr``; calling a class gives
an instance of it, calling a function or method gives an instance of its return annotation, and calling a
function the notebook defines gives what its ``return`` statement gives. A method or property looked up on
such an instance is recorded under the class that defines it (``Model.fit``, ``Timeline.summary``).
Receivers whose type cannot be told this way (loop variables, values of unannotated functions) are skipped.
A solution is read in its notebook's namespace, as the notebooks run them (``%load``).

Run ``python tests/notebook_public_names.py`` to print the names and where each is first used.
"""

import ast
import importlib
import inspect
import json
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "ipu_teach"


@dataclass(frozen=True)
class Instance:
    """An instance of ``cls`` whose value the reading does not know."""

    cls: type


@dataclass(frozen=True)
class NotebookFunction:
    """A function the notebook defines: calling it gives what its first ``return`` gives."""

    returns: object


@dataclass
class UsedName:
    """One public name: its dotted path (module and qualified name), the object, and where it is first used."""

    path: str
    obj: object
    first_use: str


@dataclass
class Reader:
    """Reads one notebook (or solution) in order, binding names and recording the public names reached."""

    source_label: str
    used: dict
    env: dict = field(default_factory=dict)

    # -- recording -------------------------------------------------------------------------------------
    def record(self, path: str, obj, line: int) -> None:
        if path not in self.used:
            self.used[path] = UsedName(path, obj, f"{self.source_label}:{line}")

    def record_object(self, obj, line: int) -> None:
        if isinstance(obj, types.ModuleType) and is_public_module(obj.__name__):
            self.record(obj.__name__, obj, line)
        elif (
            isinstance(obj, (type, types.FunctionType))
            and is_public_module(getattr(obj, "__module__", ""))
            and is_public_qualname(obj.__qualname__)
        ):
            self.record(f"{obj.__module__}.{obj.__qualname__}", obj, line)

    def record_member(self, cls: type, name: str, line: int):
        """Record ``cls.name`` under the class of the MRO that defines it; return the raw attribute."""
        for owner in cls.__mro__:
            if name in vars(owner):
                member = vars(owner)[name]
                if (
                    is_public_module(owner.__module__)
                    and is_public_qualname(owner.__qualname__)
                    and not name.startswith("_")
                ):
                    if isinstance(member, (types.FunctionType, property, classmethod, staticmethod)):
                        self.record(f"{owner.__module__}.{owner.__qualname__}.{name}", (owner, name), line)
                return member
        return None

    # -- expressions -----------------------------------------------------------------------------------
    def value(self, node):
        """The abstract value of an expression: a real object, an Instance, a NotebookFunction or None."""
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Name):
            return self.env.get(node.id)
        if isinstance(node, ast.Attribute):
            return self.attribute(self.value(node.value), node.attr, line)
        if isinstance(node, ast.Call):
            for argument in node.args + [keyword.value for keyword in node.keywords]:
                self.value(argument)
            return self.call(self.value(node.func))
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.value(child)
        return None

    def attribute(self, base, name: str, line: int):
        if base is None or isinstance(base, NotebookFunction):
            return None
        if isinstance(base, Instance):
            member = self.record_member(base.cls, name, line)
            if isinstance(member, property):
                return instance_of(annotation(member.fget))
            if isinstance(member, types.FunctionType):
                return (base.cls, member)
            return instance_of(field_annotation(base.cls, name))
        if isinstance(base, tuple):  # a method looked up on an Instance: its attributes are not used
            return None
        if isinstance(base, type) and is_public_module(base.__module__):
            member = self.record_member(base, name, line)
            if isinstance(member, types.FunctionType) or isinstance(member, property):
                return (base, member)
        elif not isinstance(base, (types.ModuleType, type)) and is_public_module(type(base).__module__):
            member = self.record_member(type(base), name, line)
            if isinstance(member, property):
                pass  # a real object: getattr below gives the property's value
            elif isinstance(member, types.FunctionType):
                return (type(base), member)
        try:
            obj = getattr(base, name)
        except Exception:
            return None
        self.record_object(obj, line)
        return obj

    def call(self, callee):
        if isinstance(callee, NotebookFunction):
            return callee.returns
        if isinstance(callee, type):
            return Instance(callee) if is_public_module(callee.__module__) else None
        if isinstance(callee, tuple):  # (class, function): a method of an Instance
            return instance_of(annotation(callee[1]))
        if isinstance(callee, (types.FunctionType, types.MethodType)):
            return instance_of(annotation(callee))
        return None

    # -- statements ------------------------------------------------------------------------------------
    def run(self, statements) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node) -> None:
        if isinstance(node, ast.Import):
            for alias in node.names:
                self.bind_import(alias.name, alias.asname, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.level == 0:
                for alias in node.names:
                    self.bind_from(node.module, alias.name, alias.asname or alias.name, node.lineno)
        elif isinstance(node, ast.Assign):
            value = self.value(node.value)
            for target in node.targets:
                self.bind(target, value)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)) and node.value is not None:
            self.value(node.value)
            self.bind(node.target, None)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for decorator in node.decorator_list:
                self.value(decorator)
            for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
                self.value(default)
            self.env[node.name] = self.function(node)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                value = self.value(item.context_expr)
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, None if isinstance(value, Instance) else value)
            self.run(node.body)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            self.value(node.iter)
            self.bind(node.target, None)
            self.run(node.body + node.orelse)
        elif isinstance(node, ast.Try):
            self.run(node.body)
            for handler in node.handlers:
                if handler.type is not None:
                    self.value(handler.type)
                if handler.name:
                    self.env[handler.name] = None
                self.run(handler.body)
            self.run(node.orelse + node.finalbody)
        elif isinstance(node, (ast.If, ast.While)):
            self.value(node.test)
            self.run(node.body + node.orelse)
        elif isinstance(node, ast.ClassDef):
            self.env[node.name] = None
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.value(child)

    def function(self, node) -> NotebookFunction:
        """Read a notebook function's body with its parameters unknown; it returns its first return's value."""
        inner = Reader(self.source_label, self.used, dict(self.env))
        for argument in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
            inner.env[argument.arg] = None
        inner.env[node.name] = NotebookFunction(None)
        inner.run(node.body)
        returns = [inner.value(n.value) for n in ast.walk(node) if isinstance(n, ast.Return) and n.value is not None]
        return NotebookFunction(returns[0] if returns else None)

    def bind(self, target, value) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self.bind(element.value if isinstance(element, ast.Starred) else element, None)
        else:
            self.value(target)  # config.auto_select_ipus = 1 reads config's attribute chain

    def bind_import(self, module_name: str, asname, line: int) -> None:
        if module_name.split(".")[0] != PACKAGE:
            self.env[asname or module_name.split(".")[0]] = None
            return
        module = importlib.import_module(module_name)
        parts = module_name.split(".")
        for depth in range(1, len(parts) + 1):
            self.record_object(importlib.import_module(".".join(parts[:depth])), line)
        self.env[asname or PACKAGE] = module if asname else importlib.import_module(PACKAGE)

    def bind_from(self, module_name: str, name: str, asname: str, line: int) -> None:
        if module_name.split(".")[0] != PACKAGE:
            self.env[asname] = None
            return
        module = importlib.import_module(module_name)
        self.record_object(module, line)
        try:
            obj = getattr(module, name)
        except AttributeError:
            obj = importlib.import_module(f"{module_name}.{name}")
        self.record_object(obj, line)
        self.env[asname] = obj


def is_public_module(name: str) -> bool:
    parts = name.split(".")
    return parts[0] == PACKAGE and not any(part.startswith("_") for part in parts)


def is_public_qualname(qualname: str) -> bool:
    return not any(part.startswith("_") or part == "<locals>" for part in qualname.split("."))


def annotation(function):
    """The return annotation of ``function`` as an object, or None."""
    function = inspect.unwrap(getattr(function, "__func__", function))
    try:
        return typing.get_type_hints(function).get("return")
    except Exception:
        return None


def field_annotation(cls: type, name: str):
    try:
        return typing.get_type_hints(cls).get(name)
    except Exception:
        return None


def instance_of(hint):
    if isinstance(hint, type) and is_public_module(hint.__module__):
        return Instance(hint)
    return None


def code_cells(notebook: Path) -> str:
    """The notebook's code cells as one script; IPython magics (``%matplotlib``) become comments."""
    cells = [cell["source"] for cell in json.loads(notebook.read_text())["cells"] if cell["cell_type"] == "code"]
    text = "\n".join("".join(source) if isinstance(source, list) else source for source in cells)
    return "\n".join("#" + line if line.lstrip().startswith(("%", "!")) else line for line in text.splitlines())


def course_sources(root: Path = REPO_ROOT):
    """(notebook path, its code, [(solution path, its code)]) for every course notebook."""
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        prefix = notebook.name.split("_")[0]
        solutions = sorted((root / "notebooks" / "solutions").glob(f"{prefix}_*.py"))
        yield notebook, code_cells(notebook), [(path, path.read_text()) for path in solutions]


def notebook_public_names(root: Path = REPO_ROOT) -> dict:
    """{dotted path: UsedName} of every public ipu_teach name the notebooks and their solutions use."""
    used: dict = {}
    for notebook, code, solutions in course_sources(root):
        reader = Reader(str(notebook.relative_to(root)), used)
        reader.run(ast.parse(code).body)
        for path, solution in solutions:
            Reader(str(path.relative_to(root)), used, dict(reader.env)).run(ast.parse(solution).body)
    return dict(sorted(used.items()))


def resolve(used: UsedName):
    """The object whose docstring documents ``used``: the module, class, function, method or property."""
    if isinstance(used.obj, tuple):
        owner, name = used.obj
        member = vars(owner)[name]
        return member if isinstance(member, property) else getattr(member, "__func__", member)
    return used.obj


if __name__ == "__main__":
    sys.path.insert(0, str(REPO_ROOT))
    for path, used in notebook_public_names().items():
        print(f"{path:<72} {used.first_use}")
