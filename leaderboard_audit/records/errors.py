"""The one error type every records problem raises."""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_SHOWN = 10


@dataclass(frozen=True)
class Problem:
    """One offender: where it is and what is wrong with it."""

    file: str
    line: int | None
    message: str
    unit: str = "line"  # "line" (text files: file:N) or "row" (Parquet tables: file, row N)

    def __str__(self) -> str:
        if self.line is None:
            where = self.file
        elif self.unit == "line":
            where = f"{self.file}:{self.line}"
        else:
            where = f"{self.file}, {self.unit} {self.line}"
        return f"{where}: {self.message}"


class RecordsError(ValueError):
    """Records that break the records-v1 contract (docs/spec/RECORDS.md, "Matching rules").

    The message names file, line and problem for at most ``MAX_SHOWN`` offenders
    and counts the rest; ``problems`` holds the shown ones, ``total`` all of them.
    """

    def __init__(self, problems: list[Problem], total: int | None = None, fix: str | None = None):
        self.problems = list(problems[:MAX_SHOWN])
        self.total = len(problems) if total is None else total
        self.fix = fix
        lines = [str(p) for p in self.problems]
        rest = self.total - len(self.problems)
        if rest > 0:
            lines.append(f"... and {rest} more problem(s) of the same kind")
        if fix:
            lines.append(f"fix: {fix}")
        head = "invalid records" if self.total == 1 else f"invalid records ({self.total} problems)"
        super().__init__(head + ":\n  " + "\n  ".join(lines))

    @classmethod
    def one(cls, file: str, line: int | None, message: str, fix: str | None = None, unit: str = "line") -> RecordsError:
        return cls([Problem(str(file), line, message, unit)], fix=fix)


@dataclass
class ProblemLog:
    """Collects offenders (keeps the first few, counts all) and raises once."""

    shown: list[Problem] = field(default_factory=list)
    total: int = 0
    fix: str | None = None

    def add(self, file: str, line: int | None, message: str, fix: str | None = None, unit: str = "line") -> None:
        self.total += 1
        if len(self.shown) < MAX_SHOWN:
            self.shown.append(Problem(str(file), line, message, unit))
        if fix and self.fix is None:
            self.fix = fix

    def __bool__(self) -> bool:
        return self.total > 0

    def raise_if_any(self) -> None:
        if self.total:
            raise RecordsError(self.shown, self.total, self.fix)
