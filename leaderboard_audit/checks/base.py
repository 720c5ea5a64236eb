"""What a check is: the contract every entry of the registry fulfils.

A check turns one paper claim into verdicts. It owns, in one module:

* ``name``: the test name (``test_<name>``) and the ``check`` field of its verdicts;
* ``thresholds``: its configurable thresholds and their defaults (names are global);
* ``section``: the key of the report section it computes (``None`` if it only judges
  sections other checks compute);
* ``compute(scope)``: that section, JSON-ready;
* ``cases(scope)``: (verdict id, test id) of every test it will produce in the scope,
  cheap (from the reference order only) so collection never runs the statistics;
  ``subjects(scope)`` the models each case is about (the submission gate);
* ``judge(scope, section)``: the verdicts (``verdicts.make_verdict``);
* ``position``: a bundled check's place in the report (and the registry), lowest first;
  its module's ``CHECK = ...`` is what registers it (``checks.BUILTIN``): one file;
* ``report_only``: ``True`` for a check with no cases anywhere (a report section only);
  every other check gets ``test_<name>`` generated (``audits/test_checks.py``);
* ``skip_reason(scope)``: why the check does not apply to this scope (then its cases
  are skipped with that reason), or ``None``;
* ``tables(name, scope_report)``: the rows the renderers show (``tables_model.Table``);
* ``gate`` / ``gate_default`` / ``gate_created``: its part in the submission gate
  (``--audit-submission``, docs/ci-gate.md): ``"subject"`` (its verdicts about a
  newcomer gate), ``"scope"`` (its scope-wide verdict gates when the newcomer's
  arrival makes it fail) or ``None`` (never gates); ``gate_default`` whether it gates
  without ``--audit-gate NAME``; ``gate_created`` whether a fail is the newcomer's.

Third-party packages register more checks through the ``leaderboard_audit.checks``
entry point group (the value is a ``Check`` subclass); see ``docs/checks.md``.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from ..records.names import POOLED

if TYPE_CHECKING:  # pragma: no cover
    from ..records import Records
    from .tables import Table
    from .thresholds import Thresholds

#: why compression and the robust subset skip graded records (docs/audits.md, "Graded outcomes")
GRADED_COMPRESSION = (
    "graded outcomes: item discrimination and the compressed set's champions are defined on right/wrong "
    "items; on a judged leaderboard they are not defined yet"
)


def discordant_items(graded: bool) -> str:
    """What a discordant item is in a verdict's words: on graded outcomes (docs/audits.md,
    "Graded outcomes") an item on which one model's outcome is above the other's."""
    return "on which one scores above the other" if graded else "only one gets right"


def num(x: Any) -> Any:
    """numpy scalars -> Python numbers; NaN -> None (report values are JSON-ready)."""
    import math

    if x is None:
        return None
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return None if math.isnan(x) else x
    return x


class Scope:
    """One scope's records (a benchmark or ``pooled``) and the quantities several
    checks share, each computed once and only when first asked for."""

    def __init__(
        self,
        records: Records,
        name: str,
        *,
        seed: int,
        n_boot: int,
        thresholds: Thresholds,
        alpha: float = 0.05,
        full: Records | None = None,
    ):
        self.records = records
        self.name = name
        self.seed = seed
        self.n_boot = n_boot
        self.thresholds = thresholds
        self.alpha = alpha
        self.full = full if full is not None else records  # every benchmark (pooled aggregates)
        self.sections: dict[str, Any] = {}  # filled by the auditor, in registry order
        #: only the verdicts and mix's headline numbers are read from this scope's sections
        #: (mix's reduced sets): a check may leave report-only parts out of its section
        self.verdicts_only = False

    def on(self, records: Records, name: str | None = None, full: Records | None = None) -> Scope:
        """A scope of other records (a subset of this one's) with this scope's settings: seed,
        resamples, thresholds, alpha; ``name`` and ``full`` default to this scope's."""
        return Scope(
            records,
            self.name if name is None else name,
            seed=self.seed,
            n_boot=self.n_boot,
            thresholds=self.thresholds,
            alpha=self.alpha,
            full=self.full if full is None else full,
        )

    @property
    def C(self) -> np.ndarray:
        """The bits: won (right) outright; what robust, fragile and the robust pairs read."""
        return self.records.correct

    @cached_property
    def graded(self) -> bool:
        """Whether some outcome is graded (records/graded.py; docs/audits.md, "Graded outcomes"):
        a subset whose outcomes are all 0/1 is audited as the boolean set it is."""
        return self.records.score is not None

    @property
    def S(self) -> np.ndarray:
        """The outcomes: ``score`` on graded records, else the bits ``C`` (the same array).
        Accuracies (counts, the harness-averaged order, discordances) are read from it."""
        return self.records.score if self.graded else self.records.correct

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.records.shape

    @property
    def names(self) -> tuple[str, ...]:
        return self.records.models

    @property
    def keys(self) -> tuple[str, ...]:
        return self.records.grid.keys

    @property
    def ref(self) -> int:
        return self.records.grid.reference_index

    @cached_property
    def counts(self) -> np.ndarray:
        """Items right per model and config (integers: exact comparisons), shared with the
        metrics that count the same array (``per_model.correct_counts``)."""
        from ..metrics.per_model import correct_counts

        if self.graded:  # mean outcomes (docs/audits.md, "Graded outcomes")
            return correct_counts(self.S)
        return correct_counts(self.C, self.parts)

    @cached_property
    def acc(self) -> np.ndarray:
        return self.counts / self.shape[1]

    def pair_counts(self, hs: np.ndarray, ls: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(|J|, higher_only, lower_only) of the model pairs (hs[j], ls[j]) (``pairs.robust_pair_counts``)."""
        from ..metrics.pairs import robust_pair_counts

        return robust_pair_counts(self.C, hs, ls)

    def config_discordance(self, xs: np.ndarray, ys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x_only, y_only), pairs x configs: items ``xs[j]`` gets right under a config and
        ``ys[j]`` wrong, and the reverse (``harness_effects.config_discordance``)."""
        from ..metrics.harness_effects import config_discordance, graded_config_discordance
        from ..metrics.per_model import config_words

        if self.graded:
            return graded_config_discordance(self.S, xs, ys)
        return config_discordance(config_words(self.C), xs, ys)

    @cached_property
    def reference_discordance(self) -> tuple[np.ndarray, np.ndarray]:
        """(x_only, y_only), models x configs: items right under config k and wrong under the
        reference, and the reverse (``harness_effects.reference_discordance``)."""
        from ..metrics.harness_effects import graded_reference_discordance, reference_discordance
        from ..metrics.per_model import config_words

        if self.graded:
            return graded_reference_discordance(self.S, self.ref)
        return reference_discordance(config_words(self.C), self.ref)

    @cached_property
    def right_square_sums(self) -> np.ndarray:
        """``sum_i R[m, i]^2`` per model, R = configs under which m gets item i right (Cochran's Q)."""
        from ..metrics.per_model import right_counts

        R = right_counts(self.C).astype(np.int64)
        return (R * R).sum(axis=1)

    def averaged_pair_counts(self, hs: np.ndarray, ls: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(above, below) of the pairs: items on which ``hs[j]``'s grid-averaged accuracy is
        above ``ls[j]``'s, and below (the harness-averaged order's counts, adjacent pairs only)."""
        from ..metrics.per_model import right_counts

        R = right_counts(self.S)
        a, b = R[np.asarray(hs, dtype=np.intp)], R[np.asarray(ls, dtype=np.intp)]
        return (a > b).sum(axis=1, dtype=np.int64), (a < b).sum(axis=1, dtype=np.int64)

    @cached_property
    def parts(self) -> list[np.ndarray] | None:
        """Each benchmark's items of a pooled scope of two or more benchmarks (views of its
        tensor; None otherwise): counts summed over items are the sum of their parts', the
        ones the benchmarks' own scopes compute (``per_model.summed_over_items``)."""
        benchmarks = self.records.benchmarks
        if self.name != POOLED or len(benchmarks) < 2:
            return None
        return [self.records.scope(b).correct for b in benchmarks]

    @cached_property
    def order(self) -> np.ndarray:
        """The reference leaderboard: reference accuracy descending, ties by name."""
        from ..metrics.per_model import leaderboard_order

        return leaderboard_order(self.counts[:, self.ref], self.names)

    @cached_property
    def ordered_names(self) -> list[str]:
        return [self.names[m] for m in self.order.tolist()]

    @cached_property
    def adjacent(self) -> list[tuple[str, str]]:
        names = self.ordered_names
        return list(zip(names[:-1], names[1:]))

    @property
    def single_config(self) -> bool:
        return self.shape[2] < 2


class Check:
    """Base class of the registry's entries (see the module docstring)."""

    name: ClassVar[str] = ""
    title: ClassVar[str] = ""
    #: a bundled check's place in the report, lowest first (read from the module's source)
    position: ClassVar[int | None] = None
    section: ClassVar[str | None] = None
    thresholds: ClassVar[dict[str, float | int]] = {}
    #: checks that need configurations to vary are skipped on a one-configuration grid
    needs_configs: ClassVar[bool] = False
    #: the section depends on the scope's name beyond its items (not reused for an alias scope)
    scope_dependent: ClassVar[bool] = False
    #: the section is computed even when the check is skipped (band: the leaderboard itself);
    #: otherwise a skipped check's section is not computed (docs/spec/AUDITS.md v3)
    section_when_skipped: ClassVar[bool] = False
    #: the submission gate: "subject" (the verdicts whose subjects include a newcomer),
    #: "scope" (the scope-wide verdicts), or None (context only; cannot be opted in)
    gate: ClassVar[str | None] = None
    #: whether it gates by default; otherwise only with ``--audit-gate <name>``
    gate_default: ClassVar[bool] = True
    #: no cases in any scope (a report section only): no ``test_<name>`` is generated for a
    #: bundled one (``audits/test_checks.py``)
    report_only: ClassVar[bool] = False

    def applies_to(self, scope_name: str, records: Records) -> bool:
        """Whether the check has cases in this scope at all (default: every scope)."""
        return True

    def skip_reason(self, scope: Scope) -> str | None:
        if self.needs_configs and scope.single_config:
            return "one configuration: nothing varies across the harness, so this check does not apply"
        return None

    def compute(self, scope: Scope) -> Any:
        return None

    def cases(self, scope: Scope) -> list[tuple[str, str]]:
        """(verdict id, test id) pairs; default one case per scope."""
        return [(f"{self.name}[{scope.name}]", scope.name)]

    def subjects(self, scope: Scope) -> list[tuple[str, ...]]:
        """The models each case is about, aligned with ``cases`` (the submission gate
        keeps a newcomer's cases); default: the whole scope."""
        return [() for _ in self.cases(scope)]

    def judge(self, scope: Scope, section: Any) -> list[dict[str, Any]]:
        """The verdicts, aligned with ``cases`` (same order, same length)."""
        raise NotImplementedError

    def tables(self, name: str, s: dict[str, Any]) -> list[Table]:
        return []

    def gate_created(
        self,
        with_v: dict[str, Any],
        without_v: dict[str, Any] | None,
        newcomers: frozenset[str],
        section: Any = None,
    ) -> bool:
        """Whether a verdict's fail is created by the newcomers' arrival: it fails with
        them and did not fail (or did not exist) without them. ``section`` is this
        check's section with the newcomers (a check may blame a fail that already
        existed on the newcomer when its own part of the section makes it fail)."""
        return with_v["status"] == "fail" and (without_v is None or without_v["status"] != "fail")

    def gate_why(self, with_v: dict[str, Any], newcomers: frozenset[str]) -> str | None:
        """The newcomer's part of a fail, in words, when the verdict's message is about more."""
        return None


__all__ = ["POOLED", "Check", "Scope", "num"]
