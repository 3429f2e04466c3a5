package main

import "strings"

// refactorSession splits a Python carriers module into a package with a
// base class and a registry, moves it from requests to httpx, fixes the
// tests and type errors that follow, and adds a new carrier on the new
// structure.
func refactorSession() *session {
	s := newSession("ref", agentSystem)

	s.user(text(`
shipwatch/carriers.py has grown into a grab bag and I want to add PostNL and DPD next. Please refactor it into a package: one module per carrier, a Carrier base class, a registry, and a shared HTTP client with the retry logic. Switch from requests to httpx while you're at it (we want HTTP/2 later).

Keep the CLI behaviour identical, and keep ‵carriers.status()‵ working for now — the Home Assistant integration in contrib/ imports it. Run pytest, mypy (strict) and ruff before you call it done. Don't bump the version, I do that at release.`))

	s.do("Let me look at the project layout and configuration first.",
		run("git status --short --branch && find shipwatch tests contrib -name '*.py' | sort", 0, text(`
## main...origin/main
contrib/homeassistant/__init__.py
contrib/homeassistant/sensor.py
shipwatch/__init__.py
shipwatch/carriers.py
shipwatch/cli.py
shipwatch/config.py
shipwatch/poller.py
shipwatch/store.py
tests/conftest.py
tests/test_carriers.py
tests/test_cli.py
tests/test_poller.py
tests/test_store.py`)),
		readFile("pyproject.toml", pyproject),
	)
	s.do("", readFile("shipwatch/carriers.py", carriersPy))
	s.do("Now the call sites and the existing carrier tests.",
		readFile("shipwatch/poller.py", pollerPy),
		readFile("shipwatch/cli.py", cliPy),
		readFile("tests/test_carriers.py", testCarriersPy),
	)
	s.do("", grep(`carriers\.|from shipwatch.carriers|import carriers`, ".", text(`
contrib/homeassistant/sensor.py:12:from shipwatch import carriers
contrib/homeassistant/sensor.py:58:        st = await self.hass.async_add_executor_job(carriers.status, self._carrier, self._number, self._key)
shipwatch/cli.py:9:from shipwatch import carriers, store
shipwatch/cli.py:22:@click.argument("carrier", type=click.Choice(sorted(carriers.STATUS_FUNCS)))
shipwatch/cli.py:45:    def notify(p: Parcel, st: carriers.TrackingStatus) -> None:
shipwatch/cli.py:53:        parcels = [p for p in parcels if not (p.last and p.last.phase is carriers.Phase.DELIVERED)]
shipwatch/poller.py:9:from shipwatch import carriers
shipwatch/poller.py:10:from shipwatch.carriers import CarrierError, Phase, TrackingStatus
shipwatch/poller.py:36:            st = carriers.status(parcel.carrier, parcel.tracking_number, key)
shipwatch/store.py:11:from shipwatch.carriers import Phase, TrackingStatus
tests/test_carriers.py:7:from shipwatch import carriers
tests/test_carriers.py:8:from shipwatch.carriers import CarrierError, Phase
tests/test_carriers.py:14:    monkeypatch.setattr(carriers.time, "sleep", lambda s: None)
tests/test_poller.py:6:from shipwatch import carriers
tests/test_poller.py:31:    monkeypatch.setattr(carriers, "status", fake_status)`)))
	s.do("Before changing anything, a baseline of the three checks:",
		run("pytest", 0, text(`
.................                                                        [100%]
17 passed in 0.61s`)),
		run("mypy", 0, "Success: no issues found in 6 source files"),
		run("ruff check . && ruff format --check .", 1, text(`
shipwatch/carriers.py:118:98: UP017 [*] Use ‵datetime.UTC‵ alias
Found 1 error.
[*] 1 fixable with the ‵--fix‵ option.`)),
	)
	s.do(text(`
Baseline: 17 tests pass, mypy is clean, ruff has one pre-existing UP017 (‵timezone.utc‵) in carriers.py, which the refactor will remove anyway.

Plan:
- ‵shipwatch/carriers/base.py‵: ‵Phase‵, ‵TrackingStatus‵, ‵CarrierError‵, abstract ‵Carrier(api_key, http)‵ with ‵status(tracking_number)‵.
- ‵shipwatch/carriers/http.py‵: ‵HttpClient.get_json‵ on httpx with the same timeout/retry/backoff (429 and 5xx), sleep injectable for tests.
- ‵dhl.py‵, ‵ups.py‵, ‵gls.py‵: one class each, same parsing as today.
- ‵shipwatch/carriers/__init__.py‵: registry, ‵get(name, api_key)‵, ‵NAMES‵, and the deprecated ‵status()‵ shim for Home Assistant.
- poller and cli move to ‵carriers.get‵; tests move from ‵responses‵ to ‵respx‵.

Let me check test_poller and store.py, which also import from carriers.`),
		readFile("tests/test_poller.py", testPollerPy),
		readRange("shipwatch/store.py", storePy, 1, 40),
	)

	s.do("Writing the new package.",
		write("shipwatch/carriers/base.py", basePy),
		write("shipwatch/carriers/http.py", strings.Replace(httpPy, "    def close(self) -> None:", "    def close(self):", 1)),
		write("shipwatch/carriers/dhl.py", dhlPy),
		write("shipwatch/carriers/ups.py", upsPy),
		write("shipwatch/carriers/gls.py", glsPy),
		write("shipwatch/carriers/__init__.py", initPy),
	)
	s.do("A package and a module with the same name can't coexist; removing the old module and switching the dependencies.",
		run("git rm -q shipwatch/carriers.py && git status --short", 0, text(`
D  shipwatch/carriers.py
?? shipwatch/carriers/`)),
		edit("pyproject.toml", `    "requests>=2.31",`, `    "httpx>=0.27",`),
		edit("pyproject.toml", `dev = ["pytest>=8", "pytest-cov", "responses>=0.25", "mypy>=1.9", "ruff>=0.4", "types-requests"]`, `dev = ["pytest>=8", "pytest-cov", "respx>=0.21", "mypy>=1.9", "ruff>=0.4"]`),
	)
	s.do("", run("pip install -q -e '.[dev]' && pip show httpx respx | grep -E '^(Name|Version)'", 0, text(`
Name: httpx
Version: 0.27.0
Name: respx
Version: 0.21.1`)))
	s.do("Now the call sites: poller uses a Carrier per parcel, cli takes the names from the registry.",
		edit("shipwatch/poller.py", `        try:
            st = carriers.status(parcel.carrier, parcel.tracking_number, key)
        except CarrierError as exc:`, `        try:
            st = carriers.get(parcel.carrier, key).status(parcel.tracking_number)
        except CarrierError as exc:`),
		edit("shipwatch/cli.py", `@click.argument("carrier", type=click.Choice(sorted(carriers.STATUS_FUNCS)))`, `@click.argument("carrier", type=click.Choice(carriers.NAMES))`),
	)
	s.do("Running the tests to see what the old tests make of it (I expect test_carriers to fail, it still uses responses and the old functions):",
		run("pytest", 1, pytestFirstRun),
	)
	s.do(text(`
As expected:
1. test_carriers.py can't import ‵responses‵ (removed) and calls ‵dhl_status‵ & co.
2. test_poller.py patches ‵carriers.status‵, but the poller now calls ‵carriers.get(...).status(...)‵, so the fake isn't used and it tries the real DHL API (ConnectError after 3 retries).
3. test_cli.py passes — the Choice now comes from NAMES.

I'll rewrite the carrier tests on respx with the same cases, plus tests for the registry and the deprecated shim, and make test_poller patch ‵carriers.get‵.`),
		write("tests/test_carriers.py", newTestCarriersPy),
		edit("tests/test_poller.py", testPollerFakeOld, testPollerFakeNew),
	)
	s.do("", run("pytest", 0, text(`
....................                                                     [100%]
20 passed in 0.58s`)))
	s.do("All 20 pass: the 7 old carrier tests became 10 (registry, shim, network errors and malformed responses are new). Now mypy and ruff:",
		run("mypy", 1, text(`
shipwatch/carriers/http.py:48: error: Function is missing a return type annotation  [no-untyped-def]
shipwatch/carriers/http.py:48: note: Use "-> None" if function does not return a value
Found 1 error in 1 file (checked 11 source files)`)),
		run("ruff check . && ruff format --check .", 1, text(`
shipwatch/carriers/ups.py:3:32: UP017 [*] Use ‵datetime.UTC‵ alias
shipwatch/carriers/ups.py:42:49: UP017 [*] Use ‵datetime.UTC‵ alias
shipwatch/carriers/http.py:36:9: PLC0415 ‵import‵ should be at the top-level of a file
Found 3 errors.
[*] 2 fixable with the ‵--fix‵ option.`)),
	)
	s.do(text(`
Three things to fix:
- mypy: ‵close()‵ lacks ‵-> None‵ (my mistake).
- ruff UP017: use ‵datetime.UTC‵ in ups.py (the same pre-existing issue, carried over).
- ruff PLC0415: the function-level import in http.py. I put it there to avoid an import cycle (base imports http for the type hint). Cleaner: define ‵CarrierError‵ in http.py's own module? No — better to move ‵CarrierError‵ into a tiny ‵errors.py‵ that both import, so http.py has no dependency on base.py.`),
		write("shipwatch/carriers/errors.py", errorsPy),
		edit("shipwatch/carriers/http.py", "    def close(self):", "    def close(self) -> None:"),
		edit("shipwatch/carriers/http.py", "import httpx\n\nlog", "import httpx\n\nfrom shipwatch.carriers.errors import CarrierError\n\nlog"),
		edit("shipwatch/carriers/http.py", "        from shipwatch.carriers.base import CarrierError\n\n", ""),
		edit("shipwatch/carriers/base.py", "class CarrierError(Exception):\n    \"\"\"The carrier API failed or returned something we cannot read.\"\"\"\n\n\n", ""),
		edit("shipwatch/carriers/base.py", "from shipwatch.carriers.http import HttpClient\n", "from shipwatch.carriers.errors import CarrierError\nfrom shipwatch.carriers.http import HttpClient\n\n__all__ = [\"Carrier\", \"CarrierError\", \"Phase\", \"TrackingStatus\"]\n"),
		edit("shipwatch/carriers/ups.py", "from datetime import datetime, timezone\n", "from datetime import UTC, datetime\n"),
		edit("shipwatch/carriers/ups.py", "updated_at=when.replace(tzinfo=timezone.utc),", "updated_at=when.replace(tzinfo=UTC),"),
	)
	s.do("", run("pytest && mypy && ruff check . && ruff format --check .", 1, text(`
....................                                                     [100%]
20 passed in 0.57s
Success: no issues found in 12 source files
All checks passed!
Would reformat: tests/test_carriers.py
1 file would be reformatted, 11 files already formatted`)))
	s.do("", run("ruff format tests/test_carriers.py && git diff --stat -- tests/test_carriers.py | tail -1 && ruff format --check .", 0, text(`
1 file reformatted
 1 file changed, 9 insertions(+), 4 deletions(-)
12 files already formatted`)))
	s.do("Everything is green. Let me make sure the Home Assistant integration still works against the shim, since it isn't covered by the test suite.",
		readRange("contrib/homeassistant/sensor.py", homeAssistantPy, 1, 70),
		run("python -c 'import contrib.homeassistant.sensor'", 1, text(`
Traceback (most recent call last):
  File "<string>", line 1, in <module>
  File "/home/dana/src/shipwatch/contrib/homeassistant/sensor.py", line 8, in <module>
    from homeassistant.components.sensor import SensorEntity
ModuleNotFoundError: No module named 'homeassistant'`)),
	)
	s.do("Home Assistant isn't installed here, so I can't import the sensor; checking statically instead that everything it uses from shipwatch still exists:",
		run(`grep -on "carriers\.[A-Za-z_]*" contrib/homeassistant/sensor.py | sort -u -t: -k3 && python -c "from shipwatch import carriers; print(carriers.status, carriers.CarrierError)"`, 0, text(`
contrib/homeassistant/sensor.py:58:carriers.status
contrib/homeassistant/sensor.py:60:carriers.CarrierError
<function status at 0x7f2b9e4c1f80> <class 'shipwatch.carriers.errors.CarrierError'>`)),
	)
	s.do(text("The sensor only uses ‵carriers.status‵ and ‵carriers.CarrierError‵, both still exported; status() now emits a DeprecationWarning, which test_status_shim_warns covers. A last end-to-end check of the CLI with the test config (list reads the local database only):"),
		run("python -m shipwatch.cli --config tests/data/config.toml list && python -m shipwatch.cli --config tests/data/config.toml add dhl JJD000390007882512 --label 'Laptop return'", 0, text(`
dhl  JJD000390007882512     in_transit        Monitor cable
ups  1Z999AA10123456784     delivered         Keyboard
watching dhl JJD000390007882512`)),
	)
	s.do("", run("git add -A shipwatch tests pyproject.toml && git status --short && git diff --cached --stat | tail -1", 0, text(`
M  pyproject.toml
D  shipwatch/carriers.py
A  shipwatch/carriers/__init__.py
A  shipwatch/carriers/base.py
A  shipwatch/carriers/dhl.py
A  shipwatch/carriers/errors.py
A  shipwatch/carriers/gls.py
A  shipwatch/carriers/http.py
A  shipwatch/carriers/ups.py
M  shipwatch/cli.py
M  shipwatch/poller.py
M  tests/test_carriers.py
M  tests/test_poller.py
 13 files changed, 348 insertions(+), 231 deletions(-)`)))
	s.say(text(`
The refactor is done and staged (not committed):

- ‵shipwatch/carriers/‵ is a package: ‵base.py‵ (Phase, TrackingStatus, abstract Carrier), ‵errors.py‵ (CarrierError), ‵http.py‵ (HttpClient on httpx: 10 s timeout, 3 attempts, exponential backoff on 429/5xx, injectable sleep and transport), and one module per carrier (‵dhl.py‵, ‵ups.py‵, ‵gls.py‵).
- ‵carriers.get(name, api_key)‵ and ‵carriers.NAMES‵ replace ‵STATUS_FUNCS‵; ‵carriers.status()‵ still works and emits a DeprecationWarning, so contrib/homeassistant keeps working.
- requests → httpx, responses → respx, types-requests dropped. Version not bumped.
- CLI unchanged (same commands, same carrier choices).

Checks: ‵pytest‵ 20 passed (17 before; the 7 carrier tests became 10), ‵mypy‵ (strict) clean, ‵ruff check‵ and ‵ruff format --check‵ clean — including the UP017 that was failing before the refactor.`))

	s.user("Looks good. Commit it, then add PostNL as the first carrier on the new structure so we see it actually makes that easy. Their API: GET https://api.postnl.nl/shipment/v2/status/barcode/{barcode} with header apikey, response has CurrentStatus.Shipment[0].Status.{StatusCode, StatusDescription, TimeStamp}. Status codes: 1 pre-alert, 2-6 in transit, 7 out for delivery, 11 delivered, 99 exception.")
	s.do("",
		run("git commit -q -m 'carriers: split into a package with a Carrier base class; requests -> httpx' && git log --oneline -1", 0, "5f1c0a2 carriers: split into a package with a Carrier base class; requests -> httpx"),
	)
	s.do("PostNL timestamps are local Dutch time without an offset (\"07-05-2024 14:31:00\"), so I'll attach Europe/Amsterdam explicitly.",
		write("shipwatch/carriers/postnl.py", postnlPy),
		edit("shipwatch/carriers/__init__.py", "from shipwatch.carriers.http import HttpClient\nfrom shipwatch.carriers.ups import UPS\n", "from shipwatch.carriers.http import HttpClient\nfrom shipwatch.carriers.postnl import PostNL\nfrom shipwatch.carriers.ups import UPS\n"),
		edit("shipwatch/carriers/__init__.py", "_REGISTRY: dict[str, type[Carrier]] = {c.name: c for c in (DHL, UPS, GLS)}", "_REGISTRY: dict[str, type[Carrier]] = {c.name: c for c in (DHL, UPS, GLS, PostNL)}"),
		write("tests/test_postnl.py", testPostnlPy),
	)
	s.do("", run("pytest tests/test_postnl.py -v", 1, postnlTestFailure))
	s.do(text(`
The parsed time carries a fixed +01:00: I hard-coded CET in postnl.py, but on 7 May the Netherlands are on summer time (CEST, +02:00), so 14:31 local became 13:31 UTC instead of 12:31. The right fix is the IANA zone, which knows the DST rules.`),
		edit("shipwatch/carriers/postnl.py", postnlTZOld, postnlTZNew),
		edit("shipwatch/carriers/postnl.py", "            updated_at=when.replace(tzinfo=_CET),", "            updated_at=when.replace(tzinfo=_TZ),"),
	)
	s.do("Checking both sides of a DST switch explicitly, since the test fixture only covers summer:",
		run(`python -c "
from datetime import datetime
from shipwatch.carriers.postnl import _TZ
for s in ('15-01-2024 14:31:00', '07-05-2024 14:31:00', '27-10-2024 02:30:00'):
    d = datetime.strptime(s, '%d-%m-%Y %H:%M:%S').replace(tzinfo=_TZ)
    print(s, '->', d.isoformat())
"`, 0, text(`
15-01-2024 14:31:00 -> 2024-01-15T14:31:00+01:00
07-05-2024 14:31:00 -> 2024-05-07T14:31:00+02:00
27-10-2024 02:30:00 -> 2024-10-27T02:30:00+02:00`)),
	)
	s.do(text(`
Winter +01:00, summer +02:00. The ambiguous hour on 27 October (02:30 happens twice) resolves to the first occurrence (fold=0), which is what PostNL means in practice; I'll note it in the docstring rather than guess further.`),
		edit("shipwatch/carriers/postnl.py", "class PostNL(Carrier):\n", "class PostNL(Carrier):\n    \"\"\"PostNL Shipment Status API v2. Timestamps are Dutch local time without an\n    offset; the hour repeated at the end of summer time resolves to its first\n    occurrence.\"\"\"\n\n"),
	)
	s.do("", run("pytest && mypy && ruff check . && ruff format --check .", 0, text(`
........................                                                 [100%]
24 passed in 0.66s
Success: no issues found in 13 source files
All checks passed!
14 files already formatted`)))
	s.do("", run("git add -A shipwatch tests && git commit -q -m 'carriers: add PostNL' && git log --oneline -2 && git show --stat HEAD | tail -4", 0, text(`
8c2e9d1 carriers: add PostNL
5f1c0a2 carriers: split into a package with a Carrier base class; requests -> httpx
 shipwatch/carriers/__init__.py |  3 +-
 shipwatch/carriers/postnl.py   | 52 +++++++++++++++++++++++++++++++++++++++++++
 tests/test_postnl.py           | 48 ++++++++++++++++++++++++++++++++++++++++
 3 files changed, 101 insertions(+), 2 deletions(-)`)))
	s.say(text(`
Two commits on main, not pushed:
1. 5f1c0a2 carriers: split into a package with a Carrier base class; requests -> httpx
2. 8c2e9d1 carriers: add PostNL

Adding PostNL took one module (52 lines), two lines in the registry and a test file — no changes to poller, cli or the HTTP code, and ‵shipwatch add postnl …‵ works because the CLI choices come from the registry.

One bug worth knowing about, caught by the test: converting a ZoneInfo to a fixed offset with ‵utcoffset(None)‵ silently uses winter time. PostNL timestamps now carry Europe/Amsterdam itself.

Checks: pytest 24 passed, mypy strict clean, ruff check/format clean.`))
	return s
}
