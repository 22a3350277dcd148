"""``mpi-controller completion bash|zsh``: a shell completion script made from the parser.

The script completes the commands, each command's flags (their listed ``--`` spelling), the
choices of flags that have them, and file names after flags that take a path. It is generated
from :func:`mpi_controller.cli.build_parser`, so it never lists a flag that does not exist.
Install: ``source <(mpi-controller completion bash)`` (or write it to
``/etc/bash_completion.d/mpi-controller``); zsh: ``source <(mpi-controller completion zsh)``.
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["add_completion_parser", "completion_script"]

SHELLS = ("bash", "zsh")
_PATH_WORDS = frozenset(("file", "files", "filename", "dir", "kubeconfig"))
"""A flag takes a path when a word of its destination (split at ``_``) is one of these."""


def add_completion_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "completion", help="print a shell completion script (bash or zsh)",
        description="Print a completion script: source <(mpi-controller completion bash)")
    parser.add_argument("shell", choices=SHELLS, help="the shell")
    parser.set_defaults(handler=_command)


def _command(args: argparse.Namespace) -> int:
    from mpi_controller.cli import build_parser

    print(completion_script(build_parser(), args.shell), end="")
    return 0


def _listed(action: argparse.Action) -> str:
    return next((s for s in action.option_strings if s.startswith("--")),
                action.option_strings[0])


def subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """``parser``'s commands by name (empty when it has none)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _quote(words: list[str]) -> str:
    return " ".join(words).replace('"', "")


def completion_script(parser: argparse.ArgumentParser, shell: str) -> str:
    """The completion script of ``parser`` for ``shell`` (one of :data:`SHELLS`)."""
    commands = subcommands(parser)
    flag_cases: list[str] = []
    value_cases: list[str] = []
    top = [_listed(a) for a in parser._actions if a.option_strings]
    for name, sub in commands.items():
        flags = [_listed(a) for a in sub._actions if a.option_strings]
        positional = [c for a in sub._actions if not a.option_strings and a.choices
                      for c in a.choices]
        flag_cases.append(f'    {name}) words="{_quote(flags + positional)}" ;;')
        for action in sub._actions:
            if not action.option_strings or action.nargs == 0:
                continue
            spellings = "|".join(action.option_strings)
            if action.choices:
                value_cases.append(f'    {name}:{spellings.replace("|", f"|{name}:")}) '
                                   f'COMPREPLY=($(compgen -W "{_quote(list(action.choices))}" '
                                   f'-- "$cur")); return ;;')
            elif _PATH_WORDS & set((action.dest or "").lower().split("_")):
                value_cases.append(f'    {name}:{spellings.replace("|", f"|{name}:")}) '
                                   'COMPREPLY=($(compgen -f -- "$cur")); return ;;')
    bash = f"""# mpi-controller completion (`mpi-controller completion {shell}`)
_mpi_controller() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local cmd="${{COMP_WORDS[1]}}" words
  if [ "$COMP_CWORD" -le 1 ]; then
    COMPREPLY=($(compgen -W "{_quote(list(commands) + top)}" -- "$cur")); return
  fi
  case "$cmd:$prev" in
{chr(10).join(value_cases)}
  esac
  case "$cmd" in
{chr(10).join(flag_cases)}
    *) words="" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}}
complete -o default -F _mpi_controller mpi-controller
"""
    if shell == "zsh":
        return "autoload -U +X bashcompinit && bashcompinit\n" + bash
    return bash
