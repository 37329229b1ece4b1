"""The fast loop's selection (tests/services.py): a test that needs a service is never in it."""

import pytest

CONFTEST = """
import pytest

pytest_plugins = ["tests.services"]


@pytest.fixture(scope="session")
def postgres_server():
    return "a server"


@pytest.fixture()
def postgres_url(postgres_server):
    return postgres_server + "/db"


@pytest.fixture(scope="session")
def vllm_engine():
    return "an engine"
"""


def test_service_tests_leave_the_fast_loop(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        import pytest

        def test_plain():
            pass

        @pytest.mark.neo4j
        def test_marked():
            pass

        def test_through_a_fixture(postgres_url):
            pass
        """
    )
    fast = pytester.runpytest_inprocess("-m", "not services", "-v")
    fast.assert_outcomes(passed=1, deselected=2)
    fast.stdout.fnmatch_lines(["*test_plain PASSED*"])
    services = pytester.runpytest_inprocess("-m", "services", "-v")
    services.assert_outcomes(passed=2, deselected=1)
    services.stdout.fnmatch_lines(["*test_marked PASSED*", "*test_through_a_fixture PASSED*"])


def test_a_service_reached_unmarked_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        """
        def test_hidden(request):
            request.getfixturevalue("vllm_engine")
        """
    )
    result = pytester.runpytest_inprocess("-m", "not services")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*starts the service fixture 'vllm_engine' but is not marked 'services'*"])
