"""Run lighteval 0.13.0's CLI with no network (.ci/lighteval_check.sh).

lighteval 0.11-0.13 import every bundled task module when the task registry is built,
whichever tasks are asked for, and two of those modules reach the network at import time:

* ``tasks/tasks/tiny_benchmarks.py`` downloads ``tinyBenchmarks.pkl`` from GitHub
  (``requests.get``) unless the file already sits next to it;
* ``tasks/tasks/mt_bench/main.py`` builds an LLM judge whose constructor asks the Hub
  whether the judge model exists (``HfApi().list_models(model_name=...)``; an argument
  huggingface_hub 1.x no longer has, so it is a TypeError before it is a network error).

Neither task is run here. This wrapper answers those two calls locally (the download
"fails" with HTTP 503, which the module tolerates; the judge lookup returns the name) and
then hands over to ``lighteval.__main__.app`` unchanged: nothing about the evaluated tasks,
the model, the metrics or the details files is altered.
"""

import sys
import types

import huggingface_hub
import requests

_get = requests.get


def _offline_get(url, *args, **kwargs):
    if "tinyBenchmarks" in str(url):
        return types.SimpleNamespace(status_code=503, content=b"")
    return _get(url, *args, **kwargs)


requests.get = _offline_get
huggingface_hub.HfApi.list_models = lambda self, *args, **kwargs: [kwargs.get("model_name") or "offline"]

from lighteval.__main__ import app  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "lighteval"
    app()
