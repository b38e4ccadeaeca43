from __future__ import annotations

import threading

from odradek.mirror.record_queue import RecordQueue


def test_a_full_queue_blocks_the_reader_until_the_writer_takes_a_batch() -> None:
    queue: RecordQueue[int] = RecordQueue(capacity=4)
    stop = threading.Event()
    assert queue.put([1, 2, 3], stop)
    put_done = threading.Event()

    def reader() -> None:
        queue.put([4, 5], stop)
        put_done.set()

    thread = threading.Thread(target=reader)
    thread.start()
    assert not put_done.wait(0.3) and len(queue) == 3
    assert queue.get(1.0) == [1, 2, 3]
    assert put_done.wait(2.0)
    thread.join()
    assert len(queue) == 2 and queue.unfinished() == 5
    queue.done(3)
    assert queue.unfinished() == 2


def test_a_blocked_put_gives_up_when_stopping() -> None:
    queue: RecordQueue[int] = RecordQueue(capacity=1)
    stop = threading.Event()
    queue.put([1], stop)
    stop.set()
    assert not queue.put([2], stop, timeout=0.01)
    assert len(queue) == 1


def test_one_batch_larger_than_the_capacity_fits_an_empty_queue() -> None:
    queue: RecordQueue[int] = RecordQueue(capacity=2)
    assert queue.put([1, 2, 3, 4], threading.Event())
    assert queue.get(0.1) == [1, 2, 3, 4] and queue.get(0.01) is None
