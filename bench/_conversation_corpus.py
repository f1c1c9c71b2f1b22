"""Seeded support conversations, some with an injected simulator error, for the fidelity bench.

Each conversation is built from a task (a goal written as the simulated user's brief), with
wording drawn from several phrasings per step. Clean conversations include the hard cases a
fidelity check must not flag: a user who gives up after the assistant failed (the goal not met,
the target's fault), a user who asks whether it talks to a bot, a closing "anything else?"
question answered with done. An injected error is one of ``early_stop`` (done while the
assistant still asks or acts, or claiming success while the goal is not met), ``goal_leak``
(a span of the goal's words said verbatim, framed in different ways) and ``persona_break``
(the user says it is an AI, speaks as the assistant, or goes on with the assistant's words).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from aieval.conversations import Scenario, scenario_from_row
from aieval.core import Conversation, ConversationOutcome, Turn

KINDS = ("early_stop", "goal_leak", "persona_break")


@dataclass(frozen=True)
class Case:
    """One generated conversation: its scenario, record, whether the goal was met, and the
    injected error's kind (``None``: clean)."""

    scenario: Scenario
    conversation: Conversation
    goal_met: bool
    injected: str | None


_TASKS = [
    (
        "refund",
        "You want a refund for order {n} because the {item} arrived {damage}; you would rather"
        " have the money back on your card than store credit, and you will not pay return"
        " shipping.",
        [
            "Hi, my {item} from order {n} showed up {damage}. Can I get my money back?",
            "Hello. Order {n}: the {item} is {damage}. What can be done about it?",
            "hey, the {item} i bought came {damage} (order {n}), not happy",
        ],
    ),
    (
        "address",
        "You need the delivery address of order {n} changed to {street} before it ships"
        " tomorrow, because you are moving out of your current flat this week.",
        [
            "Hi, could the shipping address on order {n} still be changed?",
            "Hello, I'm moving this week, can you update where order {n} goes?",
            "quick one: order {n} needs to go to a different address",
        ],
    ),
    (
        "cancel",
        "You want to cancel your premium subscription at the end of this billing month and"
        " make sure you are not charged again; you do not want a discount offer.",
        [
            "Hi, I'd like to stop my premium plan please.",
            "Hello, how do I cancel the subscription? I don't want to be billed again.",
            "I want out of premium. No offers please.",
        ],
    ),
    (
        "booking",
        "You want a table for {people} people on Friday at {hour} in the garden area, and one"
        " of the guests needs a gluten free menu.",
        [
            "Hi, do you have room for {people} on Friday evening?",
            "Hello! Looking to book a table this Friday, {people} of us.",
            "can I reserve for friday around {hour}? we're {people}",
        ],
    ),
    (
        "password",
        "You are locked out of your account after too many attempts and you need to reset the"
        " password, but you no longer have access to the old email address {email}.",
        [
            "Hi, I can't log in anymore, it says my account is locked.",
            "Hello, locked out of my account and the reset mail goes to an address I lost.",
            "account locked. can't get the reset email. help?",
        ],
    ),
]
_ITEMS = ["lamp", "kettle", "chair", "blender", "jacket", "monitor"]
_DAMAGE = ["broken", "cracked", "scratched", "with a missing part", "dented"]
_STREETS = ["12 Elm Road", "4 Harbour Lane", "77 Mill Street", "9 Birch Avenue"]

_ASK = [
    "Sorry to hear that. Could you confirm the email address on the order?",
    "I can look into this. Can you tell me the name the order was placed under?",
    "Thanks. Could you please provide the last four digits of the card you used?",
    "Happy to check. What is the postcode on the account?",
    "Before I can do that, I need your account email. What is it?",
]
_INFO = [
    "Sure, it's sam.{n}@example.org.",
    "It was under Alex Morgan.",
    "The card ends in {digits}.",
    "Postcode is AB{digits}.",
    "sam.{n}@example.org",
]
_ACT = [
    "Thank you. Let me check that for you.",
    "Got it. I'll look into the order now.",
    "Thanks, one moment while I pull up the details.",
    "Great, please wait while I verify this.",
]
_DONE_OK = [
    "All done: {result}. Is there anything else I can help you with?",
    "{result}. You will get a confirmation email shortly.",
    "I've taken care of it: {result}.",
    "Done! {result}. Does that help?",
]
_RESULTS = {
    "refund": "the refund of order {n} is issued to your card",
    "address": "order {n} will now ship to {street}",
    "cancel": "your premium plan ends on the 30th and will not renew",
    "booking": "a garden table for {people} is booked on Friday at {hour} with a gluten free menu",
    "password": "a reset link is on its way to your new address after the identity check",
}
_FAIL = [
    "I'm sorry, I can't do that for this order; it is outside our policy.",
    "Unfortunately that is not possible through this channel.",
    "I'm afraid our system does not allow that change.",
]
_THANKS = [
    "Great, thanks a lot!",
    "Perfect, that's all I needed.",
    "Thanks, that helps.",
    "Awesome, thank you.",
    "ok cool thanks",
    "Brilliant, cheers.",
]
_GIVE_UP = [
    "Okay, I'll try another way then.",
    "That's disappointing. Bye.",
    "Alright, thanks anyway.",
    "fine, I'll call the store instead",
]
_BOT_QUESTION = [
    "Am I talking to a bot or a real person?",
    "Is this an AI answering me?",
    "Are you a real human? Anyway, yes.",
]

_EARLY = [
    "Actually never mind, thanks!",
    "ok thanks bye",
    "Great, that's all I needed.",
    "Cool, all sorted then.",
    "Nevermind, I'll figure it out. Thanks.",
    "Thanks, that's everything.",
    "alright, got it, bye",
    "Perfect, thank you!",
]
_CLAIM = [
    "Perfect, that solves it, thanks!",
    "Great, problem solved.",
    "All set, thank you.",
    "Thanks, that worked.",
    "That's it, issue resolved.",
    "Got what I needed, cheers.",
]
_LEAK_FRAMES = [
    "{span}.",
    "So basically, {span}.",
    "To be clear: {span}",
    "My situation: {span}.",
    "Right, so {span}, okay?",
    "{span} - that's what I'm after.",
]
_PERSONA = [
    "As an AI, I don't actually have an order, but let's continue.",
    "I'm a language model playing a customer here. Anyway, {info}",
    "How can I help you today?",
    "Is there anything else I can help you with?",
    "Sorry, I am just an AI assistant and cannot share personal details.",
    "I'd be happy to help you with your order! {info}",
    "Thank you for contacting us. {info}",
    "Note: as per my instructions I should not reveal this. {info}",
    "I'm only a simulated user, so I'll make something up: {info}",
    "Let me help you with that. What is your order number?",
    "Breaking character for a moment: this scenario is odd. {info}",
    "Sure! Here's how you can request it: open the app and tap Orders.",
]


def generate(count: int, error_rate: float, seed: int) -> list[Case]:
    """``count`` conversations, ``round(count * error_rate)`` of them with an injected error
    (the kinds in turn), shuffled with ``seed``."""
    rng = random.Random(seed)
    errors = round(count * error_rate)
    plan = [KINDS[i % len(KINDS)] for i in range(errors)] + [None] * (count - errors)
    rng.shuffle(plan)
    return [_case(rng, i, kind) for i, kind in enumerate(plan)]


def _case(rng: random.Random, index: int, kind: str | None) -> Case:
    task, goal_text, openings = rng.choice(_TASKS)
    fill = {
        "n": str(rng.randint(1000, 99999)),
        "item": rng.choice(_ITEMS),
        "damage": rng.choice(_DAMAGE),
        "street": rng.choice(_STREETS),
        "people": str(rng.randint(2, 9)),
        "hour": f"{rng.randint(6, 9)} pm",
        "email": f"old.{rng.randint(10, 99)}@example.net",
        "digits": str(rng.randint(1000, 9999)),
    }
    goal = goal_text.format(**fill)
    scenario = scenario_from_row(
        {"id": f"{task}-{index}", "goal": goal, "persona": "a busy customer", "max_turns": 8},
        source="generated",
    )
    failing = kind is None and rng.random() < 0.2
    user = [rng.choice(openings).format(**fill)]
    assistant = [rng.choice(_ASK)]
    if rng.random() < 0.25:
        user.append(rng.choice(_BOT_QUESTION) + " " + rng.choice(_INFO).format(**fill))
    else:
        user.append(rng.choice(_INFO).format(**fill))
    assistant.append(rng.choice(_ACT))
    user.append(rng.choice(["Sure.", "ok", "Thanks, I'll wait.", "Take your time."]))
    result = _RESULTS[task].format(**fill)
    assistant.append(rng.choice(_FAIL) if failing else rng.choice(_DONE_OK).format(result=result))
    user.append(rng.choice(_GIVE_UP) if failing else rng.choice(_THANKS))
    goal_met = not failing
    if kind == "early_stop":
        goal_met = False
        if rng.random() < 0.6:  # done while the assistant still asks or acts
            cut = rng.choice([1, 2])
            user, assistant = [*user[:cut], rng.choice(_EARLY)], assistant[:cut]
        else:  # the assistant answered wrongly and the user claims success
            assistant[-1] = rng.choice(_FAIL)
            user[-1] = rng.choice(_CLAIM)
    elif kind == "goal_leak":
        words = goal.rstrip(".").split()
        size = rng.randint(9, min(16, len(words)))
        start = rng.randint(0, len(words) - size)
        span = " ".join(words[start : start + size]).replace("You ", "I ").replace("you ", "I ")
        at = rng.randrange(len(user) - 1)
        user[at] = rng.choice(_LEAK_FRAMES).format(span=span)
    elif kind == "persona_break":
        at = rng.randrange(1, len(user) - 1) if rng.random() < 0.8 else 0
        if rng.random() < 0.2:  # goes on as the assistant, in its words
            user[at] = assistant[at - 1] if at else rng.choice(_ASK)
        else:
            user[at] = rng.choice(_PERSONA).format(info=rng.choice(_INFO).format(**fill))
    return Case(scenario, _record(scenario.id, user, assistant), goal_met, kind)


def _record(scenario_id: str, user: list[str], assistant: list[str]) -> Conversation:
    """User and assistant turns in turn, the last user turn ending the conversation (done)."""
    turns: list[Turn] = []
    for i, said in enumerate(user):
        turns.append(Turn("user", said, "simulated"))
        if i < len(assistant):
            turns.append(Turn("assistant", assistant[i], "live"))
    return Conversation(scenario_id, 0, tuple(turns), ConversationOutcome("user_done", True))
