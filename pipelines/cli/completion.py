"""Shell completion for `ratings`, by argcomplete (the argparse ecosystem's own completer).

`ratings completion bash|zsh|fish` prints the script a shell sources once, e.g.
`eval "$(ratings completion bash)"` in `~/.bashrc`; from then on the shell asks `ratings` itself
for the words that fit (commands, options, calculator names, `--format` choices, folders), which
`complete_if_asked` answers from the full argument parser before any command runs.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

SHELLS = ("bash", "zsh", "fish")
"""The shells argcomplete writes a script for."""

COMPLETING = "_ARGCOMPLETE"
"""Set by the completion script while the shell asks for completions."""


def add_completion_parser(sub: argparse._SubParsersAction) -> None:
    """`ratings completion SHELL`."""
    completion = sub.add_parser(
        "completion",
        help='print the shell completion script, e.g. eval "$(ratings completion bash)"',
        description=(
            "Print a script that makes the shell complete ratings' commands and options. "
            'Add eval "$(ratings completion bash)" to ~/.bashrc (zsh: ~/.zshrc; fish: '
            "ratings completion fish | source in ~/.config/fish/config.fish)."
        ),
    )
    completion.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")


def cmd_completion(args: argparse.Namespace) -> int:
    """Print the completion script for `args.shell` on stdout."""
    import sys

    import argcomplete

    sys.stdout.write(argcomplete.shellcode(["ratings"], shell=args.shell))
    return 0


def complete_if_asked(build_parser: Callable[[], argparse.ArgumentParser]) -> None:
    """When the shell asks for completions, answer from the full parser and exit (argcomplete
    writes the words to the shell's file descriptor); otherwise do nothing, importing nothing."""
    if COMPLETING not in os.environ:
        return
    import argcomplete

    argcomplete.autocomplete(build_parser())
