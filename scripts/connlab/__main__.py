"""The `connlab` command (the console script) and `python -m connlab`.

SIGINT and SIGTERM are blocked from the first line until connlab.cli.main has its handlers in place: a
Ctrl-C during the imports (long enough to hit on a loaded machine) then waits for them and ends as any
other, with one line and status 130, instead of a traceback and death by the signal. Nothing is started
meanwhile, so no child inherits the blocked signals.
"""

import signal


def main() -> None:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    from connlab.cli import main as command_line

    command_line()


if __name__ == "__main__":
    main()
