"""The syntax tree of the CUDA C that ``_c_parse`` reads: C's scalar type
names as dtypes, pointer types, and one dataclass per expression and
statement, each with its source line."""

from dataclasses import dataclass, field

# ------------------------------------------------------------------ types

#: C's scalar type names (as ``_c_type`` spells them after reading the
#: words) and NumPy's (CuPy's kernel parameters use both) as dtype names.
SCALARS = {
    "char": "int8", "signed char": "int8", "unsigned char": "uint8",
    "short": "int16", "unsigned short": "uint16",
    "int": "int32", "signed": "int32", "unsigned": "uint32", "unsigned int": "uint32",
    "long": "int64", "unsigned long": "uint64",
    "long long": "int64", "unsigned long long": "uint64",
    "float": "float32", "double": "float64", "bool": "bool",
    "half": "float16", "__half": "float16",
    "size_t": "uint64", "ptrdiff_t": "int64", "ssize_t": "int64",
    "int8_t": "int8", "int16_t": "int16", "int32_t": "int32", "int64_t": "int64",
    "uint8_t": "uint8", "uint16_t": "uint16", "uint32_t": "uint32", "uint64_t": "uint64",
    **{n: n for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                      "uint64", "float16", "float32", "float64")},
    "void": "void",
}

#: Words of a type that change nothing lazyfuse keeps.
_IGNORED_WORDS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "static",
                  "inline", "__inline__", "__forceinline__", "__noinline__", "register",
                  "__host__", "extern"}
#: Words that say where a declaration lives.
_PLACES = {"__global__", "__device__", "__shared__", "__constant__"}
_SIGN_AND_SIZE = {"unsigned", "signed", "short", "long"}


@dataclass(frozen=True)
class Pointer:
    """A pointer parameter: an array of ``element`` in lazyfuse; ``const``
    when it points to constant elements (``const float*``: never written)."""
    element: str
    const: bool = False


# ------------------------------------------------------------------- tree

@dataclass
class Node:
    line: int


@dataclass
class Num(Node):
    value: object
    ctype: str
    char: bool = False   # a character literal ('a': an int in C)


@dataclass
class Str(Node):
    """A string literal (its escapes read): only ``printf`` reads one."""
    value: str


@dataclass
class Name(Node):
    id: str


@dataclass
class Member(Node):
    value: Node
    field: str


@dataclass
class Index(Node):
    value: Node
    index: Node


@dataclass
class Call(Node):
    func: str
    args: list


@dataclass
class Unary(Node):
    op: str          # - + ! ~ * & ++pre --pre ++post --post
    operand: Node


@dataclass
class Binary(Node):
    op: str
    left: Node
    right: Node


@dataclass
class Ternary(Node):
    cond: Node
    then: Node
    other: Node


@dataclass
class Cast(Node):
    ctype: object
    operand: Node


@dataclass
class Assign(Node):
    op: str          # = += -= ...
    target: Node
    value: Node


@dataclass
class Block(Node):
    body: list


@dataclass
class Decl(Node):
    ctype: object
    name: str
    dims: list = field(default_factory=list)   # array extents (expressions; None: extern [])
    init: object = None                         # an expression, or a list for {…}
    place: str = ""                             # "__shared__" or ""
    const: bool = False


@dataclass
class ExprStmt(Node):
    expr: Node


@dataclass
class If(Node):
    cond: Node
    then: Node
    other: object


@dataclass
class For(Node):
    init: list
    cond: object
    step: list
    body: Node


@dataclass
class While(Node):
    cond: Node
    body: Node
    test_first: bool = True


@dataclass
class Jump(Node):
    kind: str        # break, continue


@dataclass
class Return(Node):
    value: object


@dataclass
class Function(Node):
    kind: str        # __global__ or __device__
    result: object
    name: str
    params: list     # (ctype, name)
    body: Block


@dataclass
class Constant(Node):
    """A ``__constant__`` (or ``const``) array at file scope with its values."""
    ctype: str
    name: str
    dims: list
    values: list
