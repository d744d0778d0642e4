"""The exception tree drawn in oracle.errors' docstring is the real one, and complete."""

from __future__ import annotations

import inspect
import re

import oracle.errors
from oracle.errors import OracleError

BRANCH = re.compile(r"^[ │]*(?:├── |└── )?(?P<name>[A-Z][A-Za-z]+)\b")


def drawn_tree(docstring: str) -> dict[str, str | None]:
    """Each class drawn in the docstring's tree, with the class drawn as its parent."""
    tree: dict[str, str | None] = {}
    lines = docstring.split("The tree::", 1)[1].split("\n\n", 2)[1].splitlines()
    stack: list[tuple[int, str]] = []
    for line in lines:
        match = BRANCH.match(line.strip("\n")[4:])
        if not match:
            continue
        depth = match.start("name")
        while stack and stack[-1][0] >= depth:
            stack.pop()
        tree[match["name"]] = stack[-1][1] if stack else None
        stack.append((depth, match["name"]))
    return tree


def real_tree() -> dict[str, str | None]:
    classes = {
        name: cls
        for name, cls in vars(oracle.errors).items()
        if inspect.isclass(cls) and issubclass(cls, OracleError)
    }
    return {
        name: next((base.__name__ for base in cls.__bases__ if base.__name__ in classes), None)
        for name, cls in classes.items()
    }


def test_the_drawn_tree_is_the_class_tree() -> None:
    assert oracle.errors.__doc__ is not None
    assert drawn_tree(oracle.errors.__doc__) == real_tree()


def test_the_comparison_sees_a_class_missing_from_the_drawing() -> None:
    assert oracle.errors.__doc__ is not None
    drawing = oracle.errors.__doc__.replace("    │   └── LeaseLost", "    │   └── Leased")
    assert drawn_tree(drawing) != real_tree()
