"""Shapes (an example repository for the pyupgrade task class: written in Python 2-era style)."""

from typing import Dict, List, Optional


class Shape(object):
    def __init__(self, name: str, sides: Optional[int] = None) -> None:
        super(Shape, self).__init__()
        self.name = name
        self.sides = sides

    def describe(self) -> str:
        return "{} with {} sides".format(self.name, self.sides)


def count_sides(shapes: List[Shape]) -> Dict[str, int]:
    return dict((s.name, s.sides or 0) for s in shapes)


def read_names(path: str) -> List[str]:
    with open(path, "r") as handle:
        return [line.strip() for line in handle]
