"""The suite's rule that no test may skip (tests/no_skips.py), in one process and on xdist workers."""

from pathlib import Path

import pytest

from tests import no_skips


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


def test_skips_fail_the_run_on_xdist_workers(pytester: pytest.Pytester) -> None:
    # The fast loop runs on two workers (-n 2): each collects and runs in its own process, and the
    # controller only reports. The rule is the plugin's own source as the conftest, since a worker's
    # sys.path is the controller's from before the repository root was added.
    pytester.makeconftest(Path(no_skips.__file__).read_text(encoding="utf-8"))
    pytester.makepyfile(
        test_missing_extra="""
        import pytest

        pytest.importorskip("no_such_module_for_argassets", reason="needs an extra")

        def test_never_collected():
            pass
        """,
        test_tests="""
        import pytest

        def test_skips():
            pytest.skip("no server here")

        @pytest.mark.skipif(True, reason="not on this machine")
        def test_marked():
            pass

        def test_runs():
            assert True
        """,
    )
    result = pytester.runpytest_inprocess("-n", "2", "-p", "no:cacheprovider")
    # workers do not stop at a collection error: the other module's tests still run, and fail
    result.assert_outcomes(passed=1, failed=1, errors=2)
    result.stdout.fnmatch_lines(["*2 workers*"])
    text = result.stdout.str()
    for message in [
        "test_missing_extra.py was skipped while collected, and no test may skip here",
        "test_tests.py::test_marked was skipped, and no test may skip here",
        "test_tests.py::test_skips was skipped, and no test may skip here",
    ]:
        assert message in text
    assert result.ret != 0
