"""Which file holds which (benchmark, model) (docs/records.md, "Layout" and "The paper's release").

Three layouts are read:

* nested, canonical: ``<benchmark>/<model>.jsonl``;
* nested, the other way round: ``<model>/<benchmark>.jsonl``, told apart from the
  canonical one only by the lines' ``benchmark`` (or ``model``) field: when those fields
  name the file rather than the directory as the benchmark. Without such fields the
  canonical reading is taken;
* flat, the paper's release: ``*.jsonl`` files in the records directory itself, one per
  benchmark and model. The benchmark comes from the lines' ``benchmark`` field; the model
  from their ``model`` field (which wins over the file name), or from the file name with
  the benchmark removed from its start or end (``arc_gemma4-31b.jsonl``,
  ``gemma4-31b-arc.jsonl``: separator ``_``, ``__``, ``-`` or ``.``; case ignored).

:func:`discover` lists the files; :func:`resolve` names each file's benchmark and model
once it has been read, and says in a note how it did so when the layout was not the
canonical one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from .errors import ProblemLog, RecordsError
from .lines import CLOZE_MARGIN_KEY, ModelFile
from .names import RESERVED_FIX, benchmark_name_problem, filename_for_model, model_from_filename, reserved_benchmark
from .safe_io import is_regular

CANONICAL, SWAPPED, FLAT = "<benchmark>/<model>.jsonl", "<model>/<benchmark>.jsonl", "flat"
_SEPARATORS = r"(?:__|[_\-.])"


def confined(path: Path, root_real: Path, what: str) -> Path:
    """Resolve ``path`` and refuse it if it leaves the records directory."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError) as exc:  # symlink loop (RuntimeError before Python 3.13)
        raise RecordsError.one(
            str(path), None, f"{what} cannot be resolved ({exc})", fix="remove the broken or looping link"
        ) from None
    if real != root_real and root_real not in real.parents:
        raise RecordsError.one(
            str(path),
            None,
            f"{what} resolves to {real}, outside the records directory {root_real}",
            fix="copy the file into the records directory instead of linking it",
        )
    return real


@dataclass(frozen=True)
class Found:
    """A records file and the directory it sits in (None: directly in the records directory)."""

    path: Path
    folder: str | None


#: longest name a layout note quotes whole (a hostile or generated name can be megabytes long)
NOTE_NAME_CHARS = 80


def _cut(name: str) -> str:
    return name if len(name) <= NOTE_NAME_CHARS else f"{name[: NOTE_NAME_CHARS - 1]}…"


def _skipped(p: Path) -> bool:
    return p.name.startswith((".", "_"))


def _kept(path: Path, root_real: Path, what: str, lenient: bool) -> bool:
    """``confined``; when ``lenient``, a refused path is left out instead of raised."""
    try:
        confined(path, root_real, what)
    except RecordsError:
        if lenient:
            return False
        raise
    return True


def _records_files(d: Path, root_real: Path, log: ProblemLog, lenient: bool = False) -> list[Path]:
    out = []
    for f in sorted(d.iterdir(), key=lambda p: p.name):
        if f.suffix != ".jsonl" or f.name.startswith("."):
            continue
        if not _kept(f, root_real, "records file", lenient):
            continue
        if not is_regular(f):
            log.add(str(f), None, "not a regular file", fix="records are plain files")
            continue
        out.append(f)
    return out


def discover(root: Path, root_real: Path, log: ProblemLog, *, lenient: bool = False) -> tuple[str, list[Found]]:
    """The layout (``CANONICAL`` for any nested one, until read, or ``FLAT``) and its files.

    ``lenient`` (the fingerprint, records/fingerprint.py): list what the reader would read and
    leave out what it would refuse, instead of raising."""
    entries = sorted(root.iterdir(), key=lambda p: p.name)
    top = [f for f in entries if f.suffix == ".jsonl" and not f.name.startswith(".")]
    dirs = [d for d in entries if not _skipped(d) and d.is_dir() and d not in top]
    dirs = [d for d in dirs if _kept(d, root_real, "benchmark directory", lenient)]
    if top:
        nested = [d for d in dirs if any(f.suffix == ".jsonl" for f in d.iterdir())]
        if nested and lenient:
            return FLAT, [Found(f, None) for f in _records_files(root, root_real, log, True)] + [
                Found(f, d.name) for d in nested for f in _records_files(d, root_real, log, True)
            ]
        if nested:
            raise RecordsError.one(
                str(root),
                None,
                f"records files both in the directory itself "
                f"({top[0].name}) and in sub-directories ({nested[0].name}/)",
                fix="use one layout: flat files, or <benchmark>/<model>.jsonl",
            )
        return FLAT, [Found(f, None) for f in _records_files(root, root_real, log, lenient)]
    if not dirs and lenient:
        return CANONICAL, []
    if not dirs:
        raise RecordsError.one(
            str(root),
            None,
            "no benchmark directories and no records files",
            fix="lay records out as <benchmark>/<model>.jsonl",
        )
    found = []
    for d in dirs:
        files = _records_files(d, root_real, log, lenient)
        if not files:
            log.add(str(d), None, "benchmark directory holds no <model>.jsonl files")
        found += [Found(f, d.name) for f in files]
    return CANONICAL, found


def _orientation(read: list[tuple[Found, ModelFile]]) -> str:
    """SWAPPED when every file read says so through its lines' fields, else CANONICAL.

    A file whose lines carry no fields keeps the folder layout: one added file that says
    SWAPPED does not re-read a hand-made set whose other files say nothing (B18)."""
    votes = {_evidence(f, mf) for f, mf in read if mf.correct is not None}
    return SWAPPED if votes == {SWAPPED} else CANONICAL


def _evidence(f: Found, mf: ModelFile) -> str | None:
    stem = f.path.stem
    if mf.benchmark_field is not None:
        if mf.benchmark_field == f.folder:
            return CANONICAL
        if mf.benchmark_field == stem:
            return SWAPPED
    if mf.model_field is not None:
        name = mf.model_field.replace("/", "__")
        if name == stem:
            return CANONICAL
        if name == f.folder:
            return SWAPPED
    return None


def model_from_affixed(stem: str, benchmark: str) -> str | None:
    """The model in a flat file name: ``stem`` less ``benchmark`` at its start or end."""
    b = re.escape(benchmark)
    m = re.fullmatch(f"{b}{_SEPARATORS}(.+)", stem, flags=re.IGNORECASE) or re.fullmatch(
        f"(.+?){_SEPARATORS}{b}", stem, flags=re.IGNORECASE
    )
    return model_from_filename(m.group(1)) if m else None


class _Resolver:
    """Names each file's (benchmark, model) under one layout and collects the problems."""

    def __init__(self, layout: str, log: ProblemLog):
        self.layout = layout
        self.log = log
        self.files: dict[str, dict[str, ModelFile]] = {}
        self.model_from_name: list[tuple[str, str]] = []  # (file name, model) taken from names
        self.renamed: list[tuple[str, str]] = []  # (file name, model field) that differ

    def add(self, f: Found, mf: ModelFile) -> None:
        if self.layout == FLAT:
            if mf.correct is None:  # nothing read; its problems are already in the log
                return
            named = self._flat(f, mf)
        else:
            named = self._nested(f, mf)
        if named is None:
            return
        benchmark, model = named
        if not self._benchmark_ok(f, mf, benchmark):
            return
        mf.model = model
        per = self.files.setdefault(benchmark, {})
        if model in per:
            self.log.add(
                str(f.path),
                None,
                f"model {model!r} of benchmark {benchmark!r} already read from {per[model].path}",
                fix="keep one file per benchmark and model",
            )
            return
        per[model] = mf

    def _benchmark_ok(self, f: Found, mf: ModelFile, benchmark: str) -> bool:
        why = benchmark_name_problem(benchmark)
        if why is None:
            return True
        where = mf.benchmark_line if mf.benchmark_field == benchmark else None
        fix = RESERVED_FIX if reserved_benchmark(benchmark) else "rename the benchmark"
        self.log.add(str(f.path), where, why, fix=fix)
        return False

    def _nested(self, f: Found, mf: ModelFile) -> tuple[str, str] | None:
        assert f.folder is not None
        canonical = self.layout == CANONICAL
        benchmark, model_part = (f.folder, f.path.stem) if canonical else (f.path.stem, f.folder)
        if not self._benchmark_ok(f, mf, benchmark):
            return None
        where_b = f"the directory {f.folder!r}" if canonical else f"the file name {f.path.name!r}"
        if mf.benchmark_field is not None and mf.benchmark_field != benchmark:
            self.log.add(str(f.path), mf.benchmark_line, f"benchmark {mf.benchmark_field!r} does not match {where_b}")
            return None
        if mf.model_field is None:
            return benchmark, model_from_filename(model_part)
        try:
            expected = filename_for_model(mf.model_field)
        except RecordsError:
            self.log.add(
                str(f.path), mf.model_line, f"model {mf.model_field!r} cannot be a file name", fix="rename the model"
            )
            return None
        if canonical and expected != f.path.name:
            self.log.add(
                str(f.path),
                mf.model_line,
                f"model {mf.model_field!r} does not match the file name {f.path.name!r}",
                fix=f"name the file {expected!r}",
            )
            return None
        if not canonical and expected[: -len(".jsonl")] != f.folder:
            self.log.add(
                str(f.path),
                mf.model_line,
                f"model {mf.model_field!r} does not match the directory {f.folder!r}",
                fix=f"name the directory {expected[:-6]!r}",
            )
            return None
        return benchmark, mf.model_field

    def _flat(self, f: Found, mf: ModelFile) -> tuple[str, str] | None:
        benchmark = mf.benchmark_field
        if benchmark is None:
            self.log.add(
                str(f.path),
                None,
                "a records file directly in the records directory needs a 'benchmark' field on its lines",
                fix="add 'benchmark' to every line, or lay the records out as <benchmark>/<model>.jsonl",
            )
            return None
        derived = model_from_affixed(f.path.stem, benchmark)
        if mf.model_field is not None:  # the field wins; a differing file name is said in the note
            if derived is not None and derived != mf.model_field:
                self.renamed.append((f.path.name, mf.model_field))
            return benchmark, mf.model_field
        if derived is None:
            self.log.add(
                str(f.path),
                None,
                f"cannot tell the model: the file name does not start or "
                f"end with the benchmark {benchmark!r} and the lines have no 'model' field",
                fix=f"name the file '{benchmark}_<model>.jsonl' or add a 'model' field",
            )
            return None
        self.model_from_name.append((f.path.name, derived))
        return benchmark, derived


def resolve(
    read: list[tuple[Found, ModelFile]], layout: str, root: Path, log: ProblemLog
) -> tuple[dict[str, dict[str, ModelFile]], list[str]]:
    """``{benchmark: {model: file}}`` and the notes on what was inferred (empty if canonical)."""
    if layout != FLAT:
        layout = _orientation(read)
    r = _Resolver(layout, log)
    for f, mf in read:
        r.add(f, mf)
    return r.files, _notes(layout, r, read, root)


def _notes(layout: str, r: _Resolver, read: list[tuple[Found, ModelFile]], root: Path) -> list[str]:
    parts = []
    if layout == FLAT:
        how = []
        if r.model_from_name:
            name, model = r.model_from_name[0]
            how.append(f"the file name less its benchmark prefix or suffix (e.g. {_cut(name)!r} -> {_cut(model)!r})")
        if len(r.model_from_name) < sum(mf.correct is not None for _, mf in read):
            how.append("the lines' 'model' field")
        parts.append(
            "flat layout (one file per benchmark and model, as the paper's release): benchmark "
            "from the lines' 'benchmark' field, model from " + " or ".join(how)
        )
        if r.renamed:
            name, model = r.renamed[0]
            parts.append(
                f"{len(r.renamed)} file{'s' if len(r.renamed) != 1 else ''} named otherwise than their "
                f"'model' field, which wins (e.g. {_cut(name)!r} holds {_cut(model)!r})"
            )
    elif layout == SWAPPED:
        parts.append(f"layout {SWAPPED}, told by the lines' 'benchmark'/'model' fields")
    if any(mf.used_bits for _, mf in read):
        parts.append("'bits' read as 'correct'")
    if any(mf.used_scalar_margin for _, mf in read):
        parts.append(f"the per-item margin kept as margin[{CLOZE_MARGIN_KEY!r}]")
    return [f"{root}: " + "; ".join(parts)] if parts else []
