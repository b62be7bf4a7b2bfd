"""`harness view`: a stream, a session, a run or two outcomes drawn as one HTML page.

Each page is one self-contained file that opens from disk: no server, no network, its
style inline, no script, a policy that lets it fetch nothing (`page`). What it draws
is the harness's own trace (`harness._testing.trace`: the adapter fed line by line),
never a second reading of the rules:
- `page`: the shell every page shares (document, style, `escape`, `write_page`);
- `drawing`: a trace read for drawing: cells, lanes, the text as it is assembled;
- `fold`: runs of similar rows folded, and a row budget, so a page stays bounded;
- `timeline`: the rows as an HTML table, with the class names a reader finds them by;
- `stream`: one cassette's page (`stream_page`), and its parts as a section;
- `session`: a session folder's turns one after another, with the requests sent;
- `diff`: two cassettes side by side, the first row where they part marked;
- `run`: a folder of cassettes (a fault run's variants): a table of outcomes, each
  stream's timeline folded under it.
- `report`: the pages a run reports on: the plugin's fault rows x tests
  (`pytest --harness-report`), each verdict linked to its variant's page, and
  `harness conform --format html`.
It may import every other subpackage (it draws what `_testing` computes); nothing here
imports an SDK.
"""

from harness._view.page import escape, write_page
from harness._view.stream import stream_page

__all__ = ["escape", "stream_page", "write_page"]
