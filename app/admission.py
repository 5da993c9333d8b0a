"""At most SLOTS script runs compute at once, across every session; the others wait their turn.

The server is one Python process, so the script runs of all sessions share one interpreter
lock: twenty students asking for a new sentence at the same moment each get a twentieth of it,
and all of them finish near the end of the burst. Let in a few at a time (as many as the
machine's two cores keep busy: one run's tensors compute while another's Python holds the lock),
the first finish early and the last no later, with less switching between threads. A waiting run
holds no lock and no cache entry, so it cannot block a run that is let in; a stop or a rerun
asked of it takes effect at its first element once it is let in, and leaving by any exception
frees its slot (tests/app/test_admission.py).

20 users, training paused (``python -m benchmarks.load --users 20``, side by side): all
actions' p95 2.9 -> 1.4 s, a new sentence's 3.0 -> 1.7 s; one slot gave 1.5 and 2.0 s. On a
machine busy with other work the gate costs: Linux shares the cores among runnable threads, and
two runnable script threads get far less of them than twenty (a nice 19 server beside a
training run: p95 12 s without the gate, 38 s with it).
"""

from __future__ import annotations

import threading

SLOTS = 2  # the cores of the smallest machine the lab serves a lecture hall from
TURN = threading.BoundedSemaphore(SLOTS)  # wakes waiters in the order they came
