import pytest

# The shared checks of these helper modules assert; rewriting keeps pytest's detailed messages.
pytest.register_assert_rewrite("tests.tree_service.fuzzing", "tests.tree_service.reviews")
