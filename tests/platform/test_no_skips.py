"""The suite's rule that no test may skip (tests/no_skips.py)."""

import pytest


def test_a_skipped_test_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["tests.no_skips"]')
    pytester.makepyfile(
        """
        import pytest

        def test_skips():
            pytest.skip("no server here")

        @pytest.mark.skipif(True, reason="not on this machine")
        def test_marked():
            pass

        def test_runs():
            assert True
        """
    )
    result = pytester.runpytest_inprocess()
    # a skip in the test body fails it; a skip mark acts at setup, where a failure is an error
    result.assert_outcomes(passed=1, failed=1, errors=1)
    # errors are printed before failures
    result.stdout.fnmatch_lines(
        [
            "*test_marked was skipped, and no test may skip here*",
            "*test_skips was skipped, and no test may skip here*",
        ]
    )


def test_a_module_skipped_at_collection_fails_the_run(pytester: pytest.Pytester) -> None:
    pytester.makeconftest('pytest_plugins = ["tests.no_skips"]')
    pytester.makepyfile(
        test_missing_extra="""
        import pytest

        pytest.importorskip("no_such_module_for_argassets", reason="needs an extra")

        def test_never_collected():
            pass
        """,
        test_fine="""
        def test_runs():
            assert True
        """,
    )
    result = pytester.runpytest_inprocess()
    # a collection error stops the run before any test runs, as a missing service must
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*test_missing_extra.py was skipped while collected, and no test may skip here*",
            "*Interrupted: 1 error during collection*",
        ]
    )
    assert result.ret != 0
