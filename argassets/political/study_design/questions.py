"""What Study B's annotators are asked (the platform's wording; the paper's is not released)."""

from __future__ import annotations

from argassets.platform.design.tasks import Question

#: Pointwise: is the argument political? 1 = has a political leaning (the published label coding).
POLITICAL = Question(
    name="political",
    prompt="Does this statement express a political leaning (left or right)?",
    labels={"1": "Yes, it has a political leaning", "0": "No political leaning"},
)

_PAIR_ANSWERS = {"1": "The first statement", "2": "The second statement", "0": "Both equally"}

#: Pairwise, right-framed and left-framed (1 = first, 2 = second, 0 = equal, as published).
RIGHT = Question(name="right", prompt="Which statement is more right-wing?", labels=_PAIR_ANSWERS)
LEFT = Question(name="left", prompt="Which statement is more left-wing?", labels=_PAIR_ANSWERS)

#: The framings in the order the published reader concatenates them.
PAIRWISE_QUESTIONS = (LEFT, RIGHT)


def argument_text(proposition: str, locution: str) -> str:
    """The text an annotator sees: what was said, and the proposition it stands for."""
    return f"{locution}\n(Proposition: {proposition})"
