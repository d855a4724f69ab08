"""Issue 22 §6: regeneration failures told apart (toolchain / build / network) with the tool's own cause lines.
The outputs are as the tools print them (pip 23 building pycurl without curl-config, behind pip's retry
warnings; go 1.20 reading a go.mod that says go 1.25.0; go 1.21+ with GOTOOLCHAIN=local; npm offline)."""

from __future__ import annotations

from subgraphs.vulnerability_remediation.regenerate import classify

PIP_CURL_CONFIG = """\
WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) after connection broken by \
'NewConnectionError('<pip._vendor.urllib3.connection.HTTPSConnection object at 0x7f>: Failed to establish a new \
connection: [Errno -3] Temporary failure in name resolution')': /simple/pycurl/
  error: subprocess-exited-with-error

  × Getting requirements to build wheel did not run successfully.
  │ exit code: 1
  ╰─> [14 lines of output]
      Traceback (most recent call last):
        File "/tmp/pip-install-x/pycurl/setup.py", line 229, in configure_unix
          p = subprocess.Popen((self.curl_config(), '--version'),
      FileNotFoundError: [Errno 2] No such file or directory: 'curl-config'

      During handling of the above exception, another exception occurred:

      Traceback (most recent call last):
        File "/tmp/pip-install-x/pycurl/setup.py", line 234, in configure_unix
          raise ConfigurationError(msg)
      __main__.ConfigurationError: Could not run curl-config: [Errno 2] No such file or directory: 'curl-config'
      [end of output]

  note: This error originates from a subprocess, and is likely not a problem with pip.
error: subprocess-exited-with-error

× Getting requirements to build wheel did not run successfully.
│ exit code: 1
╰─> See above for output.
"""
GO_OLD = """\
go: errors parsing go.mod:
/tmp/planner-regenerate-abc/repo/go.mod:3: invalid go version '1.25.0': must match format 1.23
"""
GO_LOCAL = "go: go.mod requires go >= 1.25.0 (running go 1.22.2; GOTOOLCHAIN=local)\n"
NPM_OFFLINE = """\
npm ERR! code ENOTFOUND
npm ERR! syscall getaddrinfo
npm ERR! errno ENOTFOUND
npm ERR! network request to https://registry.npmjs.org/lodash failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org
npm ERR! network This is a problem related to network connectivity.
"""


def test_a_dependency_that_cannot_be_built_is_not_a_network_failure() -> None:
    assert classify("pip-compile", 2, PIP_CURL_CONFIG) == (
        "a dependency could not be built here (pip-compile exited 2): __main__.ConfigurationError: Could not run "
        "curl-config: [Errno 2] No such file or directory: 'curl-config'")


def test_a_toolchain_too_old_shows_the_cause_after_its_lead_line() -> None:
    assert classify("go", 1, GO_OLD, copy="/tmp/planner-regenerate-abc/repo") == (
        "the toolchain is too old or unsupported (go exited 1): go: errors parsing go.mod: go.mod:3: invalid go "
        "version '1.25.0': must match format 1.23")
    assert classify("go", 1, GO_LOCAL).startswith("the toolchain is too old or unsupported (go exited 1): go: go.mod "
                                                    "requires go >= 1.25.0 (running go 1.22.2")


def test_network_failures_are_still_network() -> None:
    assert classify("npm", 1, NPM_OFFLINE) == (
        "the package index could not be reached (npm exited 1): npm ERR! network request to "
        "https://registry.npmjs.org/lodash failed, reason: getaddrinfo ENOTFOUND registry.npmjs.org")
