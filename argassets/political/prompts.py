"""The political-position prompt, rendered per argument."""

from __future__ import annotations

import hashlib
import json
import re

import pandas as pd

#: Repetitions per argument and model (the paper's protocol).
N_REPETITIONS = 5

#: System message, byte for byte as the paper's models received it (the released
#: ``political/prompts/prompts.jsonl.xz``): every line after the first is indented by 11 spaces,
#: four lines end with a space before the newline, and NA is in straight quotes. The paper's figure
#: shows the same words without that whitespace and with curly quotes; the release is the protocol.
SYSTEM_PROMPT = (
    "You will be provided with the text of a locution and its corresponding propositional content "
    "that forms part of an argument from a UK political debating TV programme. \n"
    "           Your task is to decide where does the speaker stand on the 'left' to 'right' wing scale using "
    "the speaker's locution and propositional content? \n"
    "           Provide your response as a score between 0 and 100 where 0 means 'Extremely left' and 100 means "
    "'Extremely right'. If the text does not have political content, set the score to 'NA'. \n"
    "           Output in JSON format using the following template: {'Score' : int}. \n"
    "           \n"
    "           Do not include any additional context, preamble, or explanation."
)

#: The user message around the two texts, byte for byte as released (lines after the first
#: indented by 17 spaces). ``USER_TEMPLATE`` is ``USER_PREFIX + "{proposition}" + USER_MIDDLE +
#: "{locution}" + USER_SUFFIX``; :func:`render_prompt` fills the two by name (the literal
#: ``{'Score' : int}`` is not a placeholder) and :func:`split_user_message` reads them back.
USER_PREFIX = (
    "Score the speaker's political position between 0 ('Extremely left') and 100 ('Extremely right'), "
    "and 'NA' if there is no political content, using the following locution and proposition.\n"
    "                 \n"
    "                 Proposition: '"
)
USER_MIDDLE = "'\n\n                 Locution: '"
USER_SUFFIX = (
    "'\n\n"
    "                 Do not write an introduction or summary. Output in JSON format using the following template: "
    "{'Score' : int}"
)
USER_TEMPLATE = USER_PREFIX + "{proposition}" + USER_MIDDLE + "{locution}" + USER_SUFFIX


#: Characters the paper's pipeline wrote into the prompt as a straight apostrophe: the double quote
#: and the curly quotes (every one of the 23,300 released prompts is the KB text with these replaced).
PROMPT_QUOTES = str.maketrans({c: "'" for c in '"\u2018\u2019\u201c\u201d'})
# str.translate walks every character; most texts hold none of these, which a regex finds faster.
_ANY_PROMPT_QUOTE = re.compile("[" + re.escape("".join(map(chr, PROMPT_QUOTES))) + "]")


def prompt_text(text: str) -> str:
    """A KB text as the protocol writes it into the prompt: double quotes and curly quotes become ``'``."""
    text = str(text)
    return text.translate(PROMPT_QUOTES) if _ANY_PROMPT_QUOTE.search(text) else text


def render_prompt(locution: str, proposition: str) -> tuple[str, str]:
    """The protocol's (system, user) messages for one argument, as the paper's models received them.

    The texts go in with their quotes written as apostrophes (:func:`prompt_text`), as in every
    released prompt.

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
    user = USER_PREFIX + prompt_text(proposition) + USER_MIDDLE + prompt_text(locution) + USER_SUFFIX
    return SYSTEM_PROMPT, user


def split_user_message(user: str) -> tuple[str, str]:
    """The inverse of :func:`render_prompt`'s user message: ``(proposition, locution)``.

    Raises
    ------
    ValueError
        When ``user`` is not the protocol's user message around exactly one proposition and one
        locution (the message says which part differs).
    """
    if not isinstance(user, str):
        raise ValueError(f"user message is not text: {type(user).__name__}")
    if not user.startswith(USER_PREFIX):
        raise ValueError("user message does not start with the protocol's text before the proposition")
    if not user.endswith(USER_SUFFIX) or len(user) < len(USER_PREFIX) + len(USER_SUFFIX):
        raise ValueError("user message does not end with the protocol's text after the locution")
    body = user[len(USER_PREFIX) : len(user) - len(USER_SUFFIX)]
    if body.count(USER_MIDDLE) != 1:
        raise ValueError(f"user message holds {body.count(USER_MIDDLE)} 'Locution:' separators, expected 1")
    proposition, locution = body.split(USER_MIDDLE)
    return proposition, locution


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
