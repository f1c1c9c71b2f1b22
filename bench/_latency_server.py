"""A loopback OpenAI-compatible server that answers every chat completion after a fixed delay.

Run as ``python bench/_latency_server.py PORT DELAY_S``; it prints ``ready`` when listening.
"""

from __future__ import annotations

import asyncio
import sys

from aiohttp import web


def make_app(delay_s: float) -> web.Application:
    async def completions(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay_s)
        content = body["messages"][-1]["content"]
        return web.json_response(
            {
                "id": "bench",
                "object": "chat.completion",
                "model": body.get("model", "bench"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content[::-1]},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
            }
        )

    app = web.Application()
    app.router.add_post("/v1/chat/completions", completions)
    return app


async def serve(port: int, delay_s: float) -> None:
    runner = web.AppRunner(make_app(delay_s), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    print("ready", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), float(sys.argv[2])))
