"""Enum members as kernel arguments (Numba's ``EnumMember`` and
``IntEnumMember`` types). The launch passes a member as a number: an
``IntEnum``'s its value (it computes as an int, as Numba's does), any
other ``Enum``'s its position in its class; the class is part of the
kernel's type (``Enums.key``), known when compiling. Comparisons follow
Python's rules: ``==``/``!=`` of plain Enum members is identity (members
of two classes are never equal), of ``IntEnum`` members and numbers the
values; ``is``/``is not`` is identity. The translator's part
(``EnumValues``) is a mixin of ``_jit.Translator``."""

import ast
import enum


def _runtime_number(member):
    """What a launch passes for ``member``."""
    if isinstance(member, int):  # IntEnum, IntFlag: its value
        return int(member)
    return list(type(member)).index(member)


class Enums:
    """A launch's Enum arguments: ``classes`` maps each parameter given a
    member to the member's class."""

    def __init__(self):
        self.classes = {}

    def value(self, name, value):
        """``value`` as the launch passes it (a member as a number)."""
        if not isinstance(value, enum.Enum):
            return value
        self.classes[name] = type(value)
        return _runtime_number(value)

    def key(self):
        """The classes, for the kernel cache's key."""
        return tuple(sorted(self.classes.items(), key=lambda item: item[0]))


class EnumValues:
    """The translator's comparisons of Enum arguments. Expects ``enums``
    (``{parameter: class}``), ``bound``, ``static_value``, ``expr`` and
    ``fail``."""

    def enum_operand(self, node):
        """``(class, translated number)`` of an Enum argument or a member
        known when compiling (``Color.red``), else None."""
        if isinstance(node, ast.Name) and node.id in self.enums:
            return self.enums[node.id], ("var", node.id)
        known, value = self.static_value(node)
        if known and isinstance(value, enum.Enum):
            return type(value), ("const", _runtime_number(value))
        return None

    def enum_compare(self, e):
        """A comparison with an Enum argument in it (``a == b``, ``a is
        Color.red``), by Python's rules; None when there is none."""
        if not any(isinstance(n, ast.Name) and n.id in getattr(self, "enums", {})
                   for n in [e.left, *e.comparators]):
            return None
        if len(e.ops) != 1:
            self.fail(e, "a chained comparison of Enum members")
        op, left, right = e.ops[0], e.left, e.comparators[0]
        negate = isinstance(op, (ast.NotEq, ast.IsNot))
        a, b = self.enum_operand(left), self.enum_operand(right)
        if isinstance(op, (ast.Is, ast.IsNot)):
            if a is None or b is None:
                same = ("const", 0, "bool")  # a member is no other object
            elif a[0] is not b[0]:
                same = ("const", 0, "bool")
            else:
                same = ("bin", "equal", a[1], b[1])
        elif isinstance(op, (ast.Eq, ast.NotEq)):
            same = self.enum_equal(left, right, a, b)
        else:
            if not all(x is None or issubclass(x[0], int) for x in (a, b)):
                self.fail(e, "ordering Enum members that are not IntEnum members")
            return None  # IntEnum members are numbers: compared as such
        return ("unary", "logical_not", same) if negate else same

    def enum_equal(self, left, right, a, b):
        """``left == right`` where ``a``/``b`` are the operands as Enum
        operands (None for a number)."""
        numeric = lambda x: x is None or issubclass(x[0], int)  # noqa: E731
        if numeric(a) and numeric(b):
            return ("bin", "equal", a[1] if a else self.expr(left), b[1] if b else self.expr(right))
        if a is None or b is None or a[0] is not b[0]:
            return ("const", 0, "bool")  # Enum.__eq__ is identity
        return ("bin", "equal", a[1], b[1])
