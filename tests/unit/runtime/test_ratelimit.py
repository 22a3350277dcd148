"""Rate limiters: exact delays, as client-go's ``default_rate_limiters_test.go`` asserts them."""

from __future__ import annotations

import math

import pytest

from mpi_controller.runtime.clock import ManualClock
from mpi_controller.runtime.ratelimit import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    default_controller_rate_limiter,
)


def test_exponential_doubles_from_base_with_failures_read_before_increment() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
    assert [limiter.when("one") for _ in range(5)] == [0.001, 0.002, 0.004, 0.008, 0.016]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [0.001, 0.002]
    assert limiter.num_requeues("two") == 2


def test_exponential_forget_resets_only_that_item() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
    for _ in range(3):
        limiter.when("one")
        limiter.when("two")
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 0.001
    assert limiter.when("two") == 0.008


def test_exponential_default_reaches_1000s_cap_on_19th_failure() -> None:
    """5 ms, 10 ms, 20 ms, ...: 655.36 s on the 18th failure, the 1000 s cap on the 19th."""
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    delays = [limiter.when("k") for _ in range(25)]
    assert delays[:3] == [0.005, 0.01, 0.02]
    assert delays[17] == 0.005 * 2**17 == 655.36
    assert delays[18:] == [1000.0] * 7
    assert sum(delays[:18]) == pytest.approx(1310.715)


def test_exponential_never_overflows() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.005, 1000.0)
    for _ in range(5000):
        delay = limiter.when("k")
    assert delay == 1000.0
    assert limiter.num_requeues("k") == 5000


def test_fast_slow_switches_after_max_fast_attempts() -> None:
    limiter = ItemFastSlowRateLimiter(0.005, 10.0, max_fast_attempts=3)
    assert [limiter.when("k") for _ in range(5)] == [0.005, 0.005, 0.005, 10.0, 10.0]
    assert limiter.num_requeues("k") == 5
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0
    assert limiter.when("k") == 0.005


def test_bucket_burst_then_spacing_at_qps() -> None:
    """10 qps, burst 100: 100 immediate tokens, then each call waits 100 ms more."""
    clock = ManualClock()
    bucket = BucketRateLimiter(10, 100, clock=clock)
    assert [bucket.when(f"k{i}") for i in range(100)] == [0.0] * 100
    assert [bucket.when(f"x{i}") for i in range(1, 6)] == [i / 10 for i in range(1, 6)]
    assert bucket.num_requeues("k0") == 0


def test_bucket_refills_at_qps_up_to_burst() -> None:
    clock = ManualClock()
    bucket = BucketRateLimiter(10, 100, clock=clock)
    for i in range(101):
        bucket.when(i)  # balance -1: the next token is 100 ms away
    clock.advance(0.5)  # +5 tokens -> balance 4
    assert [bucket.when("a") for _ in range(5)] == [0.0, 0.0, 0.0, 0.0, 0.1]
    clock.advance(1000)  # refill is capped at the burst
    assert [bucket.when("b") for _ in range(100)] == [0.0] * 100
    assert bucket.when("b") == 0.1


def test_bucket_forget_is_a_noop() -> None:
    clock = ManualClock()
    bucket = BucketRateLimiter(1, 1, clock=clock)
    assert bucket.when("k") == 0.0
    bucket.forget("k")
    assert bucket.when("k") == 1.0


def test_bucket_edge_limits() -> None:
    clock = ManualClock()
    assert BucketRateLimiter(math.inf, 0, clock=clock).when("k") == 0.0
    assert BucketRateLimiter(10, 0, clock=clock).when("k") == math.inf
    frozen = BucketRateLimiter(0, 2, clock=clock)
    assert [frozen.when("k") for _ in range(3)] == [0.0, 0.0, math.inf]


class _Recording:
    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.calls: list[str] = []

    def when(self, item: object) -> float:
        self.calls.append(f"when {item}")
        return self.delay

    def forget(self, item: object) -> None:
        self.calls.append(f"forget {item}")

    def num_requeues(self, item: object) -> int:
        return len([c for c in self.calls if c == f"when {item}"])


def test_max_of_returns_longest_and_every_limiter_records() -> None:
    a, b = _Recording(0.5), _Recording(2.0)
    limiters: tuple[RateLimiter, ...] = (a, b)
    limiter = MaxOfRateLimiter(*limiters)
    assert limiter.when("k") == 2.0
    assert a.calls == ["when k"]
    assert b.calls == ["when k"]
    limiter.forget("k")
    assert a.calls == ["when k", "forget k"]
    assert b.calls == ["when k", "forget k"]


def test_max_of_num_requeues_is_the_maximum() -> None:
    fast = ItemFastSlowRateLimiter(0.005, 10.0, max_fast_attempts=3)
    exp = ItemExponentialFailureRateLimiter(0.001, 1.0)
    limiter = MaxOfRateLimiter(fast, exp)
    assert [limiter.when("k") for _ in range(5)] == [0.005, 0.005, 0.005, 10.0, 10.0]
    exp.when("k")
    assert limiter.num_requeues("k") == 6
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0


def test_default_controller_rate_limiter_is_max_of_exponential_and_bucket() -> None:
    clock = ManualClock()
    limiter = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("k") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    for i in range(96):
        assert limiter.when(f"other{i}") == 0.005  # bucket still has tokens
    # bucket is empty now: 100 ms per token dominates a fresh item's 5 ms
    assert limiter.when("fresh") == 0.1
    assert limiter.when("fresh") == 0.2
    assert limiter.num_requeues("k") == 4
    limiter.forget("k")
    assert limiter.num_requeues("k") == 0


def test_default_controller_rate_limiter_flags() -> None:
    clock = ManualClock()
    limiter = default_controller_rate_limiter(qps=2, burst=1, clock=clock)
    assert [limiter.when(i) for i in range(3)] == [0.005, 0.5, 1.0]
