"""A 429 storm: every request's first call answers 429 + Retry-After; how fast does a run end?

A loopback OpenAI-compatible server refuses the first call of each prompt with
``429 Retry-After: R`` and answers the retry. A client that simply waits per request as told
needs about ``ceil(N / C) * R`` seconds for N samples at concurrency C; the ratio printed is
aieval's wall time over that bound (target: <= 1.5), with the count of failed samples (target 0).

Run: ``python bench/rate_limits.py [N] [CONCURRENCY] [RETRY_AFTER_S]`` (default 500 16 1).
"""

from __future__ import annotations

import asyncio
import math
import socket
import sys
import threading
import time

from aiohttp import web

from aieval import run
from aieval.scorers import exact_match


def make_app(retry_after: float) -> web.Application:
    seen: set[str] = set()

    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        content = body["messages"][-1]["content"]
        if content not in seen:
            seen.add(content)
            return web.json_response(
                {"error": {"message": "slow down"}},
                status=429,
                headers={"Retry-After": str(retry_after)},
            )
        reply = {"role": "assistant", "content": content}
        return web.json_response(
            {
                "id": "bench",
                "object": "chat.completion",
                "model": body.get("model", "bench"),
                "choices": [{"index": 0, "message": reply, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    return app


def serve(retry_after: float) -> str:
    """Start the server on a thread; return its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    ready = threading.Event()

    async def main() -> None:
        runner = web.AppRunner(make_app(retry_after), access_log=None)
        await runner.setup()
        await web.SockSite(runner, sock).start()
        ready.set()
        await asyncio.Event().wait()

    threading.Thread(target=lambda: asyncio.run(main()), daemon=True).start()
    ready.wait()
    return f"http://127.0.0.1:{port}/v1"


def storm(n: int, concurrency: int, retry_after: float) -> tuple[float, int]:
    """Seconds the run took and its failed samples."""
    base_url = serve(retry_after)
    rows = [{"id": f"s{i}", "prompt": f"prompt {i}", "expected": f"prompt {i}"} for i in range(n)]
    started = time.perf_counter()
    result = run(
        name="storm",
        dataset=rows,
        scorers=[exact_match],
        provider="openai-compatible",
        model="bench",
        base_url=base_url,
        concurrency=concurrency,
        cache=False,
        store=False,
    )
    return time.perf_counter() - started, result.error_count


def main() -> None:
    n, concurrency = (int(a) for a in (sys.argv[1:3] or ["500", "16"]))
    retry_after = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
    elapsed, failed = storm(n, concurrency, retry_after)
    bound = math.ceil(n / concurrency) * retry_after
    print(
        f"{n} samples, concurrency {concurrency}, every first call 429 Retry-After {retry_after}s"
    )
    print(f"aieval: {elapsed:.1f} s, {failed} failed samples")
    print(f"per-request waiting: {bound:.1f} s; ratio {elapsed / bound:.2f}x (target <= 1.5x)")


if __name__ == "__main__":
    main()
