"""The judgment store's interface: completions by key, claims with leases, non-answers asked again
(docs/judgments.md, "The judgment cache")."""

from __future__ import annotations

import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from argassets.platform.judging.interface import Completion
from argassets.platform.storage.judgment_cache.codec import Again, Item, Row

#: Seconds between two "waiting for the judgment cache" lines.
WAIT_REPORT_S = 10.0


def new_owner_id() -> str:
    """A claim owner: host, process and a random part (one per judging call)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


@dataclass
class ClaimOutcome:
    """What :meth:`JudgmentStore.claim` found for the keys asked for.

    ``claimed``: now held by the caller (send them); ``stored``: in the cache and final for the
    caller (use them); the rest are held by a live writer (wait, then ask again).
    """

    claimed: set[Item] = field(default_factory=set)
    stored: dict[Item, Row] = field(default_factory=dict)


class JudgmentStore:
    """The interface of both stores (the semantics: docs/judgments.md, "The judgment cache")."""

    location: str
    #: Told, about every :data:`WAIT_REPORT_S` seconds, while a write waits for another process.
    on_wait: Callable[[str], None] | None = None

    def lookup(self, model: str, sampling_key: str) -> dict[Item, Row]:
        """Every stored completion of one scope, by ``(prompt_sha256, run)``."""
        raise NotImplementedError

    def store(
        self,
        model: str,
        sampling_key: str,
        backend: str,
        items: Iterable[tuple[str, Completion]],
        owner: str | None = None,
        again: Again | None = None,
    ) -> set[Item]:
        """Store ``(prompt_sha256, completion)`` pairs and drop ``owner``'s claims on them, in one
        transaction. Returns the items really written.

        An item already stored is left as it is, except an item of ``again`` whose stored row is
        still the non-answer with the attempts given there: that one is replaced and its attempts
        grow by one. A completion is stored as a non-answer when :func:`is_non_answer` says so.
        """
        raise NotImplementedError

    def fetch(self, model: str, sampling_key: str, items: Iterable[Item]) -> dict[Item, Row]:
        """The stored rows of some items of a scope (absent items are left out)."""
        raise NotImplementedError

    def claim(
        self,
        model: str,
        sampling_key: str,
        items: Sequence[Item],
        owner: str,
        lease_s: float,
        again: Again | None = None,
    ) -> ClaimOutcome:
        """Claim the items for ``owner`` for ``lease_s`` seconds, in one transaction.

        An item is claimed when nobody holds it, when ``owner`` already does, or when its holder's
        lease ran out. Items already stored are returned in :attr:`ClaimOutcome.stored` instead,
        except an item of ``again`` still stored as the non-answer seen (same attempts): that one
        is claimed like a missing item, to be asked again.
        """
        raise NotImplementedError

    def renew(self, owner: str, lease_s: float) -> int:
        """Extend every claim of ``owner`` to ``lease_s`` seconds from now; returns how many."""
        raise NotImplementedError

    def release(self, owner: str) -> int:
        """Drop every claim of ``owner`` (it stopped without storing them); returns how many."""
        raise NotImplementedError

    def claims(self, model: str | None = None) -> int:
        """Number of claims held (of one model, or all), expired or not."""
        raise NotImplementedError

    def count(self, model: str | None = None) -> int:
        """Number of stored completions (of one model, or all)."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- shared behaviour ---------------------------------------------------------------------

    @contextmanager
    def waits_told_to(self, say: Callable[[str], None] | None) -> Iterator[None]:
        """Say through ``say`` what a write waits for while the block runs (nothing waits in silence)."""
        before, self.on_wait = self.on_wait, say
        try:
            yield
        finally:
            self.on_wait = before

    @contextmanager
    def lease(self, owner: str, lease_s: float) -> Iterator[None]:
        """Keep ``owner``'s claims alive while the block runs, and drop what is left at the end.

        A daemon thread renews the claims every ``lease_s / 3`` seconds; when the process dies the
        renewals stop and the claims expire, so other writers take the work over.
        """
        stop = threading.Event()

        def heartbeat() -> None:
            while not stop.wait(lease_s / 3.0):
                try:
                    self.renew(owner, lease_s)
                except Exception:  # a failed renewal is retried at the next beat
                    continue

        thread = threading.Thread(target=heartbeat, name=f"judgment-cache-lease-{owner}", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            self.release(owner)

    def __enter__(self) -> JudgmentStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
