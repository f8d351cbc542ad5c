"""What the tests share that is not a fixture: the tests' folders, complete results rows, the site built
from the pinned results, the browser's helpers, the process markers, and the helpers of the end-to-end tests.

The fixtures are in the conftest.py files; a test module imports from here, never from `conftest`.
"""
