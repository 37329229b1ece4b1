"""The political-position prompt, rendered per argument."""

from __future__ import annotations

import hashlib
import json

import pandas as pd

#: Repetitions per argument and model (the paper's protocol).
N_REPETITIONS = 5

#: System message, verbatim from the paper (including its typographic quotes around NA).
SYSTEM_PROMPT = (
    "You will be provided with the text of a locution and its corresponding propositional content "
    "that forms part of an argument from a UK political debating TV programme.\n"
    "Your task is to decide where does the speaker stand on the 'left' to 'right' wing scale using "
    "the speaker's locution and propositional content?\n"
    "Provide your response as a score between 0 and 100 where 0 means 'Extremely left' and 100 means "
    "'Extremely right'. If the text does not have political content, set the score to \u201cNA\u201d.\n"
    "Output in JSON format using the following template: {'Score' : int}.\n"
    "\n"
    "Do not include any additional context, preamble, or explanation."
)

#: User message template, verbatim from the paper; ``{proposition}`` and ``{locution}`` are the only
#: placeholders (the literal ``{'Score' : int}`` is not one, so :func:`render_prompt` substitutes
#: by name instead of :meth:`str.format`).
USER_TEMPLATE = (
    "Score the speaker's political position between 0 ('Extremely left') and 100 ('Extremely right'), "
    "and 'NA' if there is no political content, using the following locution and proposition.\n"
    "\n"
    "Proposition: '{proposition}'\n"
    "\n"
    "Locution: '{locution}'\n"
    "\n"
    "Do not write an introduction or summary. Output in JSON format using the following template: "
    "{'Score' : int}"
)


def render_prompt(locution: str, proposition: str) -> tuple[str, str]:
    """The protocol's (system, user) messages for one argument.

    Parameters
    ----------
    locution
        The locution text with the speaker prefix removed.
    proposition
        The propositional content (I-node text).

    Returns
    -------
    tuple of str
        ``(SYSTEM_PROMPT, user message)``.
    """
    if locution is None or proposition is None:
        raise ValueError("render_prompt needs both a locution and a proposition (got None)")
    user = USER_TEMPLATE.replace("{proposition}", str(proposition)).replace("{locution}", str(locution))
    return SYSTEM_PROMPT, user


def prompt_sha256(system: str, user: str) -> str:
    """SHA-256 of the canonical JSON of the chat messages (same rule as the judging library)."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    canonical = json.dumps(messages, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def render_prompts(arguments: pd.DataFrame) -> pd.DataFrame:
    """The protocol prompt for every knowledge-base argument.

    Parameters
    ----------
    arguments
        ``political_kb_arguments`` (needs ``argument_id``, ``locution``, ``proposition``).

    Returns
    -------
    pandas.DataFrame
        ``argument_id``, ``locution``, ``proposition``, ``system``, ``user``, ``prompt_sha256``,
        one row per argument in ``argument_id`` order.

    Raises
    ------
    ValueError
        When a column is missing, an ``argument_id`` repeats, or an argument lacks its text
        (the message names the argument).
    """
    missing = {"argument_id", "locution", "proposition"} - set(arguments.columns)
    if missing:
        raise ValueError(f"political_kb_arguments lacks column(s) {sorted(missing)}")
    duplicated = arguments["argument_id"][arguments["argument_id"].duplicated()]
    if len(duplicated):
        raise ValueError(f"political_kb_arguments: argument_id {duplicated.iloc[0]!r} occurs more than once")
    rows = []
    for argument_id, locution, proposition in zip(
        arguments["argument_id"], arguments["locution"], arguments["proposition"], strict=True
    ):
        if not isinstance(locution, str) or not isinstance(proposition, str):
            raise ValueError(f"political_kb_arguments: argument {argument_id!r} has no locution or proposition text")
        system, user = render_prompt(locution, proposition)
        rows.append((str(argument_id), locution, proposition, system, user, prompt_sha256(system, user)))
    frame = pd.DataFrame(rows, columns=["argument_id", "locution", "proposition", "system", "user", "prompt_sha256"])
    return frame.sort_values("argument_id", kind="stable").reset_index(drop=True)
