# The two commands: `make demo` (set up, open the tour) and `make test` (set up, run every test).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-js test-py js chromium bench clean lock

setup: $(STAMP) js

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip

EXTRAS := test,tiktoken,openai,anthropic,mcp

# constraints.txt pins what the suite last passed with (npm's package-lock.json does the same for js/).
$(STAMP): $(PY) pyproject.toml constraints.txt
	$(PIP) install -q -c constraints.txt -e ".[$(EXTRAS)]"
	touch $(STAMP)

# Remake constraints.txt from the newest releases pyproject.toml's ranges allow, in a scratch venv.
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock && .venv-lock/bin/pip install -q --upgrade pip
	.venv-lock/bin/pip install -q -e ".[$(EXTRAS)]"
	{ sed -n '/^#/p' constraints.txt; .venv-lock/bin/pip freeze --exclude-editable; } > constraints.txt.new
	mv constraints.txt.new constraints.txt && rm -rf .venv-lock

js/node_modules/.package-lock.json: js/package-lock.json
	cd js && npm ci --no-audit --no-fund

# The prebuilt JupyterLab / Notebook 7 extension (js/lab/ → agentctx_widgets/labextension/), linked into
# the venv the way a wheel installs it (share/jupyter/labextensions/agentctx-widgets).
LABEXT_LINK := $(VENV)/share/jupyter/labextensions/agentctx-widgets

js: js/node_modules/.package-lock.json $(STAMP)
	cd js && npm run build && PATH="$(CURDIR)/$(VENV)/bin:$$PATH" npm run build:lab
	rm -rf $(LABEXT_LINK) && mkdir -p $(dir $(LABEXT_LINK)) && ln -s "$(CURDIR)/agentctx_widgets/labextension" $(LABEXT_LINK)

# Debian's Chromium for the browser tests (never Playwright's own download).
chromium:
	@test -x /usr/bin/chromium || (apt-get update -q && apt-get install -y -q chromium)

# Jupyter refuses to run as root unless told; containers and CI machines often are root.
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)

demo: setup
	$(VENV)/bin/jupyter lab notebooks/tour.ipynb $(ALLOW_ROOT)

test-js: js
	cd js && npm run typecheck && npm test

test-py: setup chromium
	$(PY) -m pytest tests notebooks --nbval --nbval-sanitize-with=notebooks/sanitize.cfg -p no:cacheprovider

test: setup chromium test-js test-py

bench: setup chromium
	$(PY) bench/estimate.py
	$(PY) bench/output.py
	$(PY) bench/view_sink.py
	cd js && node bench/delta-append.mjs
	$(PY) bench/assemble.py
	$(PY) bench/stream.py
	$(PY) bench/frontend.py
	$(PY) bench/load.py
	$(PY) bench/models.py
	$(PY) bench/notebook_size.py
	$(PY) bench/watch.py
	$(PY) bench/marimo_stream.py
	$(PY) bench/yao_output.py
	$(PY) bench/yao_runner.py
	$(PY) bench/yao_typescript.py

clean:
	rm -rf $(VENV) js/node_modules agentctx_widgets/static agentctx_widgets/labextension js/lab/build-info.js
