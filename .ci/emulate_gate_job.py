#!/usr/bin/env python3
"""Run the submission gate's GitHub Actions job locally, as GitHub would (stdlib only).

    python .ci/emulate_gate_job.py --base BASE_DIR --pr PR_DIR --work TMP_DIR [--pr-number N]

``BASE_DIR`` is the base branch's tree (trusted: it holds the workflow, the gate's ini
and the board's records), ``PR_DIR`` the pull request head's whole tree (untrusted).
The emulation makes real local git repositories for both (the base repository and a
fork with the PR branch), so that the job's ``git fetch``/``git diff``/``git archive``
by SHA run for real, then reads the job from the base's workflow file (like
``pull_request_target``: the PR cannot change the job) and runs it:

* ``${{ ... }}`` expressions are substituted **textually, before the shell runs**, in
  ``run:``, ``env:``, ``with:`` and ``if:`` (the attack surface: a PR-controlled value
  pasted into ``run:`` becomes script text);
* each ``run:`` step is a script run with bash (``bash -e {0}``, or ``bash --noprofile
  --norc -eo pipefail {0}`` for ``shell: bash``) in the emulated workspace, with the
  workflow's, job's and step's ``env:``, ``GITHUB_OUTPUT``/``GITHUB_ENV``/
  ``GITHUB_STEP_SUMMARY`` files, and ``if:`` (``success()`` by default, ``always()``,
  ``failure()``);
* ``actions/checkout`` fetches the ref from the local base repository (depth 1);
* ``actions/setup-python`` puts a **fresh venv** (``WORK/python``, from the interpreter
  running this script) first on PATH, in which leaderboard-audit is *not* installed: the
  job's own install step installs it for real, with the real ``pip``. Like a runner's
  package cache, the venv sees the packages of the interpreter running this script
  (``WORK/runner_cache``: links to its site-packages, leaderboard-audit's own files left
  out), so pip finds the dependencies there and needs no network;
* ``gh`` is a recording stub first on PATH: ``gh api`` keeps the PR's comments in
  ``STATE/comments.json`` and logs every call to ``STATE/gh_calls.jsonl``.

Writes ``WORK/result.json`` (each step: name, outcome, exit code, output) and exits 0
if the job succeeded, 1 if it failed, 2 on an emulation error.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

WORKFLOW = ".github/workflows/audit-gate.yml"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "emulator",
    "GIT_AUTHOR_EMAIL": "emulator@localhost",
    "GIT_COMMITTER_NAME": "emulator",
    "GIT_COMMITTER_EMAIL": "emulator@localhost",
    "GIT_CONFIG_NOSYSTEM": "1",
}


class EmulationError(Exception):
    pass


# -- a YAML subset (what workflow files use) --------------------------------------------


class _Yaml:
    """Block mappings and sequences, ``|``/``|-``/``>`` block scalars, quoted and plain
    scalars, flow sequences ``[a, "b"]``. Every scalar is a string (GitHub stringifies)."""

    KEY = re.compile(r"""^(?P<key>"[^"]*"|'[^']*'|[^\s'"#\-\[{][^:#]*?|-[^\s:#][^:#]*?):(?:\s+(?P<rest>.*))?$""")

    def __init__(self, text: str) -> None:
        self.lines = text.expandtabs(8).splitlines()
        self.i = 0

    @staticmethod
    def _significant(line: str) -> bool:
        s = line.strip()
        return bool(s) and not s.startswith("#")

    def _peek(self) -> tuple[int, str] | None:
        while self.i < len(self.lines) and not self._significant(self.lines[self.i]):
            self.i += 1
        if self.i >= len(self.lines):
            return None
        line = self.lines[self.i]
        return len(line) - len(line.lstrip(" ")), line.strip()

    def parse(self):
        nxt = self._peek()
        if nxt is None:
            return {}
        value = self._block(nxt[0])
        if self._peek() is not None:
            raise EmulationError(f"workflow line {self.i + 1}: unexpected indentation")
        return value

    def _block(self, indent: int):
        nxt = self._peek()
        if nxt is None or nxt[0] < indent:
            return ""
        if nxt[1] == "-" or nxt[1].startswith("- "):
            return self._sequence(nxt[0])
        return self._mapping(nxt[0])

    def _sequence(self, indent: int) -> list:
        out: list = []
        while (nxt := self._peek()) is not None and nxt[0] == indent and (nxt[1] == "-" or nxt[1].startswith("- ")):
            content = nxt[1][1:].lstrip(" ")
            if not content:
                self.i += 1
                out.append(self._block(indent + 1))
            elif self.KEY.match(self._strip_comment(content)):
                inner = indent + (len(nxt[1]) - len(content))
                self.lines[self.i] = " " * inner + content  # the item's mapping starts here
                out.append(self._mapping(inner))
            else:
                self.i += 1
                out.append(self._scalar(content))
        return out

    def _mapping(self, indent: int) -> dict:
        out: dict = {}
        while (nxt := self._peek()) is not None and nxt[0] == indent and not nxt[1].startswith("- "):
            m = self.KEY.match(self._strip_comment(nxt[1]))
            if not m:
                raise EmulationError(f"workflow line {self.i + 1}: not a 'key: value' line: {nxt[1]!r}")
            key = self._unquote(m["key"].strip())
            rest = (m["rest"] or "").strip()
            self.i += 1
            if key in out:
                raise EmulationError(f"workflow line {self.i}: key {key!r} repeated")
            if not rest:
                after = self._peek()
                if after is not None and (after[0] > indent or (after[0] == indent and after[1].startswith("- "))):
                    out[key] = self._block(after[0])
                else:
                    out[key] = ""
            elif rest[0] in "|>":
                out[key] = self._block_scalar(indent, rest)
            else:
                out[key] = self._scalar(rest)
        return out

    def _block_scalar(self, indent: int, header: str) -> str:
        raw: list[str] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
                break
            raw.append(line)
            self.i += 1
        body = [ln for ln in raw if ln.strip()]
        cut = min((len(ln) - len(ln.lstrip(" ")) for ln in body), default=0)
        text = [ln[cut:] if ln.strip() else "" for ln in raw]
        while text and not text[-1]:
            text.pop()
        if header.startswith(">"):
            joined = "\n".join(text).replace("\n\n", "\0").replace("\n", " ").replace("\0", "\n")
        else:
            joined = "\n".join(text)
        return joined if header.rstrip().endswith("-") else joined + "\n"

    @staticmethod
    def _strip_comment(s: str) -> str:
        quote = None
        for k, ch in enumerate(s):
            if quote:
                quote = None if ch == quote else quote
            elif ch in "\"'" and (k == 0 or s[k - 1] in " [,:"):
                quote = ch
            elif ch == "#" and (k == 0 or s[k - 1] == " "):
                return s[:k].rstrip()
        return s

    @staticmethod
    def _unquote(s: str) -> str:
        if len(s) >= 2 and s[0] == s[-1] == '"':
            return json.loads(s)
        if len(s) >= 2 and s[0] == s[-1] == "'":
            return s[1:-1].replace("''", "'")
        return s

    def _scalar(self, s: str):
        s = self._strip_comment(s).strip()
        if s.startswith("[") and s.endswith("]"):
            items, cur, quote = [], "", None
            for ch in s[1:-1]:
                if quote:
                    quote = None if ch == quote else quote
                elif ch in "\"'":
                    quote = ch
                elif ch == ",":
                    items.append(cur.strip())
                    cur = ""
                    continue
                cur += ch
            if cur.strip():
                items.append(cur.strip())
            return [self._unquote(x) for x in items]
        return self._unquote(s)


def load_workflow(text: str) -> dict:
    return _Yaml(text).parse()


# -- expressions ------------------------------------------------------------------------

EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def evaluate(expr: str, contexts: dict, status: dict):
    """The expressions a workflow of this kind uses: a context path (``github.event.x``,
    ``steps.id.outputs.y``, ``env.Z``), a string/number literal, ``always()``,
    ``success()``, ``failure()``, ``cancelled()``; anything else is an emulation error."""
    e = expr.strip()
    fn = {"always()": True, "success()": not status["failed"], "failure()": status["failed"], "cancelled()": False}
    if e in fn:
        return fn[e]
    if re.fullmatch(r"'(?:[^']|'')*'", e):
        return e[1:-1].replace("''", "'")
    if re.fullmatch(r"-?\d+(\.\d+)?", e):
        return e
    if re.fullmatch(r"[A-Za-z_][\w-]*(\.[A-Za-z_][\w-]*)*", e):
        cur = contexts
        for part in e.split("."):
            if not isinstance(cur, dict):
                return ""
            cur = cur.get(part, "")
        return cur
    raise EmulationError(f"expression not emulated: ${{{{ {e} }}}}")


def as_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value)
    return str(value)


def substitute(text: str, contexts: dict, status: dict) -> str:
    """GitHub's substitution: each ``${{ expr }}`` is replaced by its value's text, in the
    string as written, before any shell sees it."""
    return EXPR.sub(lambda m: as_text(evaluate(m[1], contexts, status)), text)


def condition(cond: str | None, contexts: dict, status: dict) -> bool:
    if cond is None or cond == "":
        return not status["failed"]
    c = cond.strip()
    m = EXPR.fullmatch(c)
    value = evaluate(m[1] if m else c, contexts, status)
    return value not in (False, "", "false", "0", 0, None)


# -- stubs on PATH ----------------------------------------------------------------------

GH_STUB = r'''#!{python}
"""gh stub: ``gh api`` against a local comment store; every call is logged."""
import json, os, re, shutil, subprocess, sys
from pathlib import Path

state = Path({state!r})
store = state / "comments.json"
comments = json.loads(store.read_text()) if store.exists() else []
argv = sys.argv[1:]
call = {{"argv": argv, "cwd": os.getcwd(), "token": bool(os.environ.get("GH_TOKEN"))}}
if not argv or argv[0] != "api":
    call["error"] = "only 'gh api' is emulated"
    with open(state / "gh_calls.jsonl", "a") as f:
        f.write(json.dumps(call) + "\n")
    sys.exit(2)
method, endpoint, fields, jq, k = "GET", None, {{}}, None, 1
while k < len(argv):
    a = argv[k]
    if a in ("-X", "--method"):
        method = argv[k + 1]; k += 2; continue
    if a in ("-F", "--field", "-f", "--raw-field"):
        key, _, val = argv[k + 1].partition("=")
        if a in ("-F", "--field") and val.startswith("@"):
            val = Path(val[1:]).read_text()
        fields[key] = val; k += 2; continue
    if a in ("-q", "--jq"):
        jq = argv[k + 1]; k += 2; continue
    if a == "--paginate":
        k += 1; continue
    if endpoint is None:
        endpoint = a; k += 1; continue
    call["error"] = f"unexpected argument {{a!r}}"; break
if fields and method == "GET":
    method = "POST"
call.update(method=method, endpoint=endpoint, fields=fields, jq=jq)
out, code = None, 0
m_list = re.fullmatch(r"repos/[^/]+/[^/]+/issues/(\d+)/comments", endpoint or "")
m_one = re.fullmatch(r"repos/[^/]+/[^/]+/issues/comments/(\d+)", endpoint or "")
if "error" in call:
    code = 2
elif m_list and method == "GET":
    out = [c for c in comments if c["issue"] == int(m_list[1])]
elif m_list and method == "POST":
    c = {{"id": 1000 + len(comments), "issue": int(m_list[1]), "body": fields.get("body", "")}}
    comments.append(c); out = c
elif m_one and method == "PATCH":
    hit = [c for c in comments if c["id"] == int(m_one[1])]
    if hit:
        hit[0]["body"] = fields.get("body", hit[0]["body"]); out = hit[0]
    else:
        code = 1; call["error"] = "no such comment"
else:
    code = 2; call["error"] = "endpoint not emulated"
store.write_text(json.dumps(comments))
if out is not None and code == 0:
    text = json.dumps(out)
    if jq is not None:
        if shutil.which("jq"):
            text = subprocess.run(["jq", "-r", jq], input=text, capture_output=True, text=True, check=True).stdout
        else:
            m = re.fullmatch(r'\.\[\] \| select\(\.body \| startswith\("([^"]*)"\)\) \| \.id', jq)
            if not m:
                code = 2; call["error"] = "jq filter not emulated (no jq binary)"; text = ""
            else:
                text = "".join(f"{{c['id']}}\n" for c in out if c["body"].startswith(m[1]))
    sys.stdout.write(text if text.endswith("\n") or not text else text + "\n")
call["exit"] = code
with open(state / "gh_calls.jsonl", "a") as f:
    f.write(json.dumps(call) + "\n")
sys.exit(code)
'''

# what of this interpreter's site-packages the runner cache leaves out: leaderboard-audit
# itself (installed or editable) and .pth files (which would put a source tree on the path)
NOT_CACHED = ("leaderboard_audit", "leaderboard-audit", "__editable__", "_leaderboard_audit")


def write_stub(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(0o755)


# -- git ---------------------------------------------------------------------------------


def git(cwd: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    r = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        raise EmulationError(f"git {' '.join(args)} in {cwd}: {r.stderr.strip()}")
    return r.stdout.strip()


def commit_tree(repo: Path, tree: Path, message: str) -> str:
    """Make ``repo``'s working tree exactly ``tree`` and commit it; the commit's SHA."""
    for entry in repo.iterdir():
        if entry.name != ".git":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for entry in tree.iterdir():
        if entry.name == ".git":
            continue
        dest = repo / entry.name
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, dest, symlinks=True)
        else:
            shutil.copy2(entry, dest, follow_symlinks=False)
    git(repo, "add", "-A", "-f", ".")
    git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", message)
    return git(repo, "rev-parse", "HEAD")


def make_repos(base: Path, pr: Path, root: Path) -> dict:
    """``origin`` (the base repository, bare), ``fork`` (bare, with the PR branch)."""
    src = root / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    base_sha = commit_tree(src, base, "base")
    head_sha = commit_tree(src, pr, "the pull request")
    origin, fork = root / "origin.git", root / "fork.git"
    for bare in (origin, fork):
        git(root, "init", "-q", "--bare", bare.name)
        git(bare, "config", "uploadpack.allowAnySHA1InWant", "true")  # GitHub serves any SHA
    git(src, "push", "-q", origin.as_uri(), f"{base_sha}:refs/heads/main")
    git(src, "push", "-q", fork.as_uri(), f"{head_sha}:refs/heads/submission")
    return {"origin": origin, "fork": fork, "base_sha": base_sha, "head_sha": head_sha}


# -- the job -----------------------------------------------------------------------------


def shell_command(shell: str | None, script: Path) -> list[str]:
    if shell in (None, ""):
        return ["bash", "-e", str(script)]
    if shell == "bash":
        return ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)]
    if shell == "sh":
        return ["sh", "-e", str(script)]
    raise EmulationError(f"shell not emulated: {shell!r}")


def read_kv_file(path: Path) -> dict[str, str]:
    """``name=value`` lines and ``name<<DELIM`` … ``DELIM`` blocks (GITHUB_OUTPUT/ENV)."""
    out: dict[str, str] = {}
    if not path.exists():
        return out
    lines = path.read_text().splitlines()
    k = 0
    while k < len(lines):
        line = lines[k]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delim = line.split("<<", 1)
            body = []
            k += 1
            while k < len(lines) and lines[k] != delim:
                body.append(lines[k])
                k += 1
            out[name] = "\n".join(body)
        elif "=" in line:
            name, value = line.split("=", 1)
            out[name] = value
        k += 1
    return out


def run_job(
    base: Path,
    pr: Path,
    work: Path,
    pr_number: int = 7,
    job: str | None = None,
    state: Path | None = None,
    step_timeout: int = 600,
) -> dict:
    """Emulate one run of the job; ``state`` (the PR's comments and the stubs' logs) may be
    shared between runs, as a PR's comments are between its pushes."""
    work.mkdir(parents=True, exist_ok=True)
    state = state or work / "state"
    state.mkdir(parents=True, exist_ok=True)
    repos_root, stubs = work / "repos", work / "bin"
    workspace, runner_temp, home = work / "workspace", work / "runner_temp", work / "home"
    for d in (repos_root, stubs, workspace, runner_temp, home):
        d.mkdir()
    repos = make_repos(base, pr, repos_root)
    # pull_request_target: the workflow is the base's, read from the base commit
    wf_text = git(repos_root / "src", "show", f"{repos['base_sha']}:{WORKFLOW}")
    wf = load_workflow(wf_text + "\n")
    jobs = wf.get("jobs") or {}
    name = job or next(iter(jobs))
    spec = jobs[name]
    defaults_shell = ((spec.get("defaults") or wf.get("defaults") or {}).get("run") or {}).get("shell")

    py = Path(sys.executable)
    write_stub(stubs / "gh", GH_STUB.format(python=py, state=str(state)))
    runner_python = work / "python"  # actions/setup-python puts it first on PATH
    path = os.pathsep.join([str(stubs), str(runner_python / "bin"), "/usr/local/bin", "/usr/bin", "/bin"])
    event = {
        "action": "synchronize",
        "number": pr_number,
        "pull_request": {
            "number": pr_number,
            "base": {"sha": repos["base_sha"], "ref": "main", "repo": {"full_name": "board/leaderboard"}},
            "head": {
                "sha": repos["head_sha"],
                "ref": "submission",
                "repo": {"full_name": "contributor/leaderboard", "clone_url": repos["fork"].as_uri()},
            },
        },
    }
    (work / "event.json").write_text(json.dumps(event))
    contexts: dict = {
        "github": {
            "event_name": "pull_request_target",
            "event": event,
            "repository": "board/leaderboard",
            "token": "ghs_emulated_token",
            "workspace": str(workspace),
            "sha": repos["base_sha"],
            "ref": "refs/heads/main",
            "base_ref": "main",
            "head_ref": "submission",
        },
        "steps": {},
        "env": {},
        "runner": {"os": "Linux", "temp": str(runner_temp)},
        "secrets": {"GITHUB_TOKEN": "ghs_emulated_token"},
    }
    status = {"failed": False}
    base_env = {
        "PATH": path,
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": str(work / "event.json"),
        "GITHUB_REPOSITORY": "board/leaderboard",
        "GITHUB_WORKSPACE": str(workspace),
        "RUNNER_TEMP": str(runner_temp),
        **GIT_ENV,
    }
    added_env: dict[str, str] = {}
    results = []
    for n, step in enumerate(spec.get("steps") or []):
        label = step.get("name") or step.get("uses") or (step.get("run") or "").splitlines()[0]
        rec = {"index": n, "name": label, "id": step.get("id")}
        results.append(rec)
        if not condition(step.get("if"), contexts, status):
            rec.update(outcome="skipped")
            continue
        env = {**base_env, **added_env}
        for scope in (wf.get("env") or {}, spec.get("env") or {}, step.get("env") or {}):
            for k, v in scope.items():
                env[k] = substitute(as_text(v), contexts, status)
        contexts["env"] = {k: v for k, v in env.items() if k not in base_env}
        out_file, env_file, summary = runner_temp / f"output_{n}", runner_temp / f"env_{n}", runner_temp / "summary.md"
        for f in (out_file, env_file):
            f.write_text("")
        env.update(GITHUB_OUTPUT=str(out_file), GITHUB_ENV=str(env_file), GITHUB_STEP_SUMMARY=str(summary))
        if "uses" in step:
            code, output = run_action(step, contexts, status, repos, workspace, env)
        else:
            script_text = substitute(step.get("run") or "", contexts, status)
            script = runner_temp / f"step_{n}.sh"
            script.write_text(script_text)
            rec["script"] = script_text
            cwd = workspace / substitute(step.get("working-directory", ""), contexts, status)
            shell = step.get("shell") or defaults_shell
            try:
                r = subprocess.run(
                    shell_command(shell, script),
                    cwd=cwd,
                    env=env,
                    capture_output=True,
                    text=True,
                    errors="replace",
                    timeout=step_timeout,
                )
                code, output = r.returncode, r.stdout + r.stderr
            except subprocess.TimeoutExpired as e:
                code, output = 124, f"step timed out after {e.timeout}s"
        outputs = read_kv_file(out_file)
        added_env.update(read_kv_file(env_file))
        if step.get("id"):
            contexts["steps"][step["id"]] = {"outputs": outputs, "outcome": "success" if code == 0 else "failure"}
        rec.update(outcome="success" if code == 0 else "failure", exit_code=code, output=output, outputs=outputs)
        if code != 0 and as_text(step.get("continue-on-error", "false")) != "true":
            status["failed"] = True
    result = {
        "job": name,
        "conclusion": "failure" if status["failed"] else "success",
        "steps": results,
        "base_sha": repos["base_sha"],
        "head_sha": repos["head_sha"],
        "workspace": str(workspace),
        "state": str(state),
    }
    (work / "result.json").write_text(json.dumps(result, indent=1))
    return result


def run_action(step: dict, contexts: dict, status: dict, repos: dict, workspace: Path, env: dict) -> tuple[int, str]:
    uses = step["uses"]
    with_ = {k: substitute(as_text(v), contexts, status) for k, v in (step.get("with") or {}).items()}
    action = uses.split("@")[0]
    if action == "actions/checkout":
        ref = with_.get("ref") or contexts["github"]["sha"]
        try:
            git(workspace, "init", "-q")
            git(workspace, "remote", "add", "origin", repos["origin"].as_uri())
            git(workspace, "fetch", "-q", "--no-tags", "--depth=1", "origin", ref)
            git(workspace, "checkout", "-q", "--detach", "FETCH_HEAD")
        except EmulationError as e:
            return 1, str(e)
        return 0, f"checked out {ref} (persist-credentials: {with_.get('persist-credentials', 'true')})"
    if action == "actions/setup-python":
        try:
            venv = setup_python(workspace.parent)
        except EmulationError as e:
            return 1, str(e)
        return 0, f"setup-python (emulated): a fresh venv {venv} (packages cached: {venv.parent / 'runner_cache'})"
    raise EmulationError(f"action not emulated: {uses}")


def runner_cache(dest: Path) -> Path:
    """Links to the entries of this interpreter's site-packages, leaderboard-audit's own
    files and every ``.pth`` left out: the dependencies a runner's pip cache would hold."""
    import site

    dest.mkdir(parents=True, exist_ok=True)
    for sp in site.getsitepackages():
        for entry in sorted(Path(sp).iterdir()):
            if entry.name.startswith(NOT_CACHED) or entry.suffix == ".pth" or (dest / entry.name).exists():
                continue
            (dest / entry.name).symlink_to(entry)
    return dest


def setup_python(work: Path) -> Path:
    """``actions/setup-python``: a fresh venv (no leaderboard-audit) that sees the runner cache."""
    venv, cache = work / "python", runner_cache(work / "runner_cache")
    r = subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], capture_output=True, text=True)
    if r.returncode != 0:
        raise EmulationError(f"setup-python: python -m venv {venv}: {r.stderr.strip()}")
    purelib = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    Path(purelib, "_runner_cache.pth").write_text(f"{cache}\n")
    # the runner's Python is configured not to byte-compile what pip installs (pip's site-level
    # config, sys.prefix/pip.conf): 0.7 of the install step's 2.8 s, and no step reads a .pyc
    (venv / "pip.conf").write_text("[install]\ncompile = false\n")
    return venv


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, type=Path, help="the base branch's tree (trusted)")
    ap.add_argument("--pr", required=True, type=Path, help="the pull request head's tree")
    ap.add_argument("--work", type=Path, help="an empty or new folder for the emulation (default: a temp folder)")
    ap.add_argument("--pr-number", type=int, default=7)
    ap.add_argument("--job")
    ap.add_argument("--state", type=Path, help="the PR's comment store, kept between runs (default: WORK/state)")
    a = ap.parse_args(argv)
    work = a.work or Path(tempfile.mkdtemp(prefix="gate-job-"))
    try:
        result = run_job(a.base.resolve(), a.pr.resolve(), work.resolve(), a.pr_number, a.job, a.state)
    except EmulationError as e:
        print(f"emulation error: {e}", file=sys.stderr)
        return 2
    for s in result["steps"]:
        print(f"[{s['outcome']}] {s['name']}" + (f" (exit {s['exit_code']})" if "exit_code" in s else ""))
        if s.get("output") and s["outcome"] == "failure":
            print("    " + s["output"].strip()[-2000:].replace("\n", "\n    "))
    print(f"job {result['job']}: {result['conclusion']} ({work / 'result.json'})")
    return 0 if result["conclusion"] == "success" else 1


if __name__ == "__main__":
    raise SystemExit(main())
