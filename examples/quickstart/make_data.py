"""Write the quickstart datasets: support_qa.jsonl and order_extraction.jsonl.

Two recorded versions of a customer-support assistant for Larkspur Goods, a fictional online
store. ``support-bot-v2`` is better on average than ``support-bot-v1`` but not on every row. The
output is deterministic: ``python make_data.py [--out DIR]`` always writes the same bytes.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

SEED = 20250301
V1, V2 = "support-bot-v1", "support-bot-v2"

# The store's policy sheet: every reference answer takes its facts from here.
POLICY = {
    "refund_window": "30 days",
    "refund_time": "5-7 business days",
    "return_fee": "$6.95",
    "restocking_fee": "15%",
    "std_ship": "3-5 business days",
    "std_fee": "$5.99",
    "free_over": "$50",
    "express_ship": "1-2 business days",
    "express_fee": "$14.99",
    "intl_ship": "7-14 business days",
    "cancel_window": "1 hour",
    "reset_expiry": "24 hours",
    "warranty": "1 year",
    "price_match": "14 days",
    "hours": "8am-8pm ET, Monday to Saturday",
    "points": "1 point per $1",
    "student_discount": "10%",
}
# Plausible wrong values, the kind of facts a model gets wrong.
WRONG = {
    "refund_window": ["14 days", "60 days", "90 days"],
    "refund_time": ["24 hours", "2-3 weeks", "10-14 business days"],
    "return_fee": ["$4.99", "$9.95", "nothing"],
    "restocking_fee": ["10%", "20%", "25%"],
    "std_ship": ["2-3 business days", "5-7 business days", "7-10 business days"],
    "std_fee": ["$4.99", "$7.99", "$3.99"],
    "free_over": ["$35", "$75", "$100"],
    "express_ship": ["next business day", "2-3 business days", "same day"],
    "express_fee": ["$9.99", "$19.99", "$24.99"],
    "intl_ship": ["5-7 business days", "10-21 business days", "3-4 weeks"],
    "cancel_window": ["24 hours", "30 minutes", "2 hours"],
    "reset_expiry": ["1 hour", "48 hours", "7 days"],
    "warranty": ["2 years", "6 months", "90 days"],
    "price_match": ["7 days", "30 days", "10 days"],
    "hours": ["24/7", "9am-5pm ET, Monday to Friday", "8am-6pm PT every day"],
    "points": ["2 points per $1", "1 point per $10", "5 points per $1"],
    "student_discount": ["15%", "20%", "5%"],
}

ITEMS = [
    "Trailhead rain jacket",
    "Cedar wool throw",
    "Alder cast-iron skillet",
    "Fjord backpack 28L",
    "Marlow ceramic mug set",
    "Quill noise-cancelling headphones",
    "Harbor linen sheets",
    "Summit trekking poles",
    "Juniper scented candle",
    "Beacon smart desk lamp",
    "Orchard bamboo cutting board",
    "Pioneer insulated bottle",
    "Halcyon yoga mat",
    "Rowan leather wallet",
    "Ember wireless speaker",
    "Willow kids' raincoat",
]

# fmt: off
# (category, difficulty, questions, reference answer, paraphrase of the answer).
# Questions may use {order}, {item}, {days}; answers use policy keys and the same slots.
TOPICS: list[tuple[str, str, list[str], str, str]] = [
    ("returns", "easy", [
        "What is your return policy?",
        "how long do i have to return something",
        "Can I still return an item I bought a few weeks ago?",
        "Whats the deadline for returns?",
    ], "You can return unused items within {refund_window} of delivery for a full refund.",
       "Unused items can be returned for a full refund up to {refund_window} after delivery."),
    ("returns", "medium", [
        "I got my {item} {days} days ago and I don't like it. Can I send it back?",
        "Is it too late to return the {item}? It arrived {days} days ago.",
        "Bought the {item}, delivered {days} days ago, want to return. Possible?",
    ], "Yes. Items can be returned within {refund_window} of delivery. Start the return from "
       "Orders in your account and print the prepaid label.",
       "Yes, you are still inside the {refund_window} return window. Go to Orders in your "
       "account, choose the item and print the prepaid label."),
    ("returns", "easy", [
        "Do I have to pay for return shipping?",
        "Is the return label free?",
        "how much does it cost to send something back",
    ], "A return label costs {return_fee}, deducted from your refund. Returns of damaged or "
       "wrong items are free.",
       "We deduct {return_fee} from the refund for the return label, unless the item arrived "
       "damaged or was the wrong item, in which case the return is free."),
    ("returns", "medium", [
        "Is there a restocking fee on electronics?",
        "I want to return the {item}, which I opened. Will you charge a restocking fee?",
        "Do opened electronics get a restocking fee?",
    ], "Opened electronics have a {restocking_fee} restocking fee. Unopened electronics and all "
       "other items have no restocking fee.",
       "There is a {restocking_fee} restocking fee only on opened electronics; everything else "
       "is returned without one."),
    ("returns", "hard", [
        "I lost the receipt and the box for the {item}. Can I still return it?",
        "No original packaging anymore for my {item}, can I still get a refund?",
    ], "Yes. You do not need a receipt because the order is in your account, and any sturdy box "
       "works. The item must be unused and within {refund_window} of delivery.",
       "You can. We find the order in your account, so no receipt is needed, and any sturdy box "
       "is fine as long as the item is unused and inside the {refund_window} window."),
    ("returns", "medium", [
        "Can I exchange the {item} for a different size?",
        "i need a bigger size of the {item}, how do i swap it",
    ], "Yes. Start a return from Orders and choose Exchange; we ship the new size as soon as "
       "the return is scanned, with free standard shipping.",
       "Choose Exchange when you start the return under Orders. The new size ships free as soon "
       "as the carrier scans your return."),
    ("billing", "easy", [
        "When will I get my refund?",
        "How long do refunds take?",
        "I returned my order {order} last week, where is my money?",
    ], "Refunds are issued to your original payment method within {refund_time} after we "
       "receive the return.",
       "Once the return reaches us, the refund goes back to your original payment method in "
       "{refund_time}."),
    ("billing", "medium", [
        "I was charged twice for order {order}!!",
        "There are two charges on my card for the same order {order}. Please fix this.",
        "double charged for {order}, what is going on",
    ], "One of the two charges is a temporary authorization hold. It drops off within 3 business "
       "days; if it is still there after that, reply with a screenshot and we will refund it.",
       "The second charge is an authorization hold that your bank releases within 3 business "
       "days. If it has not gone by then, send us a screenshot and we will refund it."),
    ("billing", "easy", [
        "What payment methods do you accept?",
        "Can I pay with PayPal?",
        "do you take apple pay",
    ], "We accept Visa, Mastercard, American Express, PayPal, Apple Pay and Larkspur gift cards.",
       "You can pay by Visa, Mastercard, Amex, PayPal, Apple Pay or a Larkspur gift card."),
    ("billing", "medium", [
        "The {item} dropped in price right after I bought it. Can I get the difference?",
        "Do you do price adjustments? My {item} is cheaper now.",
    ], "Yes. If the price drops within {price_match} of your purchase, contact us and we refund "
       "the difference to your original payment method.",
       "We refund the difference when the price falls within {price_match} of purchase; just "
       "contact us with your order number."),
    ("billing", "hard", [
        "Can I get a refund on a gift card I bought by mistake?",
        "I bought a $100 e-gift card to the wrong email address. Refund?",
    ], "Gift cards cannot be refunded, but if it has not been redeemed we can resend it to the "
       "correct email address.",
       "We can't refund gift cards. If it is still unredeemed, we can send it to the right email "
       "instead."),
    ("billing", "medium", [
        "Do you offer a student discount?",
        "is there a discount for students",
    ], "Yes. Verified students get {student_discount} off full-price items; verify once under "
       "Account > Discounts.",
       "Students get {student_discount} off full-price items after a one-time verification in "
       "Account > Discounts."),
    ("billing", "easy", [
        "How do loyalty points work?",
        "How many reward points do I earn?",
    ], "You earn {points} spent, and 100 points give $5 off a future order.",
       "Every $1 spent earns {points}; redeem 100 points for $5 off."),
    ("shipping", "easy", [
        "How long does shipping take?",
        "When will my order arrive if I choose standard shipping?",
        "how long for delivery",
    ], "Standard shipping takes {std_ship}. Express shipping takes {express_ship}.",
       "Standard delivery is {std_ship}; express is {express_ship}."),
    ("shipping", "easy", [
        "How much is shipping?",
        "Is shipping free?",
        "What's the minimum order for free shipping?",
    ], "Standard shipping is free on orders over {free_over}; otherwise it costs {std_fee}. "
       "Express shipping costs {express_fee}.",
       "Orders over {free_over} ship free. Below that, standard shipping is {std_fee} and "
       "express is {express_fee}."),
    ("shipping", "medium", [
        "Where is my order {order}? It has been a week.",
        "My order {order} still hasn't arrived, can you check?",
        "tracking for {order} hasn't updated in days",
    ], "I checked order {order}: it is with the carrier and the tracking link is in your "
       "shipping confirmation email. If it has not moved in 5 business days, we will send a "
       "replacement or refund it.",
       "Order {order} is in transit with the carrier; use the tracking link in your shipping "
       "email. If tracking has not moved for 5 business days we will replace or refund it."),
    ("shipping", "medium", [
        "Do you ship internationally?",
        "Can you ship to Canada?",
        "I live in Germany, can I order from you?",
    ], "Yes, we ship to over 40 countries. International delivery takes {intl_ship}, and duties "
       "are paid by the customer.",
       "We ship to more than 40 countries in {intl_ship}; customs duties are the customer's "
       "responsibility."),
    ("shipping", "hard", [
        "I need to change the shipping address on order {order}, I moved.",
        "Wrong address on {order}!! Can you change it before it ships?",
    ], "We can change the address if order {order} has not shipped yet. Reply with the new "
       "address; once it has shipped, the carrier's redirect option is the only way.",
       "If {order} hasn't shipped, send us the new address and we will update it. After it "
       "ships, only the carrier can redirect it."),
    ("shipping", "medium", [
        "The tracking says delivered but I never got my package {order}.",
        "Package {order} marked as delivered but it's not here",
    ], "Please check with neighbours and around your door, and wait one more day because "
       "carriers sometimes scan early. If it still has not shown up, reply and we will send a "
       "replacement.",
       "Carriers sometimes mark packages delivered early, so check nearby and give it one more "
       "day. If it is still missing, reply and we will ship a replacement."),
    ("shipping", "easy", [
        "How much is express shipping?",
        "how fast is express",
    ], "Express shipping costs {express_fee} and arrives in {express_ship}.",
       "Express is {express_fee} and takes {express_ship}."),
    ("account", "easy", [
        "How do I reset my password?",
        "forgot my password",
        "I can't log in, I don't remember my password.",
    ], "Click Forgot password on the sign-in page and use the link we email you. The link "
       "expires after {reset_expiry}.",
       "Use Forgot password on the sign-in page; the reset link we email is valid for "
       "{reset_expiry}."),
    ("account", "medium", [
        "How do I delete my account?",
        "Please delete my account and all my data.",
    ], "Go to Account > Privacy and choose Delete account. We delete your data within 30 days, "
       "except order records we must keep for tax purposes.",
       "Choose Delete account under Account > Privacy. Your data is erased within 30 days, apart "
       "from order records kept for tax law."),
    ("account", "easy", [
        "How do I change my email address?",
        "can i update the email on my account",
    ], "Go to Account > Profile, edit the email address and confirm it from the link we send.",
       "Edit it under Account > Profile, then confirm the new address from our email."),
    ("account", "medium", [
        "I never received the password reset email.",
        "reset email not arriving, checked spam already",
    ], "Reset emails can take up to 10 minutes. Check spam, make sure you used the email on the "
       "account, and request a new link if the old one is older than {reset_expiry}.",
       "Give it up to 10 minutes and check spam. Confirm it is the address on your account, and "
       "request a new link if the first is older than {reset_expiry}."),
    ("account", "hard", [
        "Someone placed an order on my account that I didn't make!",
        "I think my account was hacked, there's an order {order} I don't recognize",
    ], "Reset your password now and reply with the order number. We will cancel the order if it "
       "has not shipped and refund any charge you did not make.",
       "Please change your password right away and send us the order number; we will cancel it "
       "if unshipped and refund the unauthorized charge."),
    ("account", "easy", [
        "How do I unsubscribe from your emails?",
        "stop sending me marketing emails",
    ], "Click Unsubscribe at the bottom of any marketing email, or turn off marketing emails "
       "under Account > Notifications.",
       "Use the Unsubscribe link in any marketing email or switch it off in Account > "
       "Notifications."),
    ("orders", "medium", [
        "Can I cancel my order {order}?",
        "I want to cancel order {order}, I ordered by mistake.",
        "cancel {order} please",
    ], "Orders can be cancelled within {cancel_window} of purchase from Orders in your account. "
       "After that, wait for delivery and return it.",
       "You can cancel in your account within {cancel_window} of ordering. Past that, the order "
       "ships and you can return it once it arrives."),
    ("orders", "medium", [
        "Can I add an item to my order {order}?",
        "forgot to add something to {order}, can you add it",
    ], "We cannot add items to an order once it is placed. Place a second order; it ships free "
       "if it is over {free_over}.",
       "Items can't be added after checkout, so please place a new order, which ships free "
       "over {free_over}."),
    ("orders", "hard", [
        "My {item} arrived broken. Order {order}.",
        "The {item} in order {order} came damaged, the box was crushed.",
        "received a damaged {item}, what now",
    ], "Sorry about that. Reply with a photo of the damage and we will send a free replacement or "
       "a full refund, and you do not need to return the damaged item.",
       "We're sorry. Send us a photo of the damage and choose a free replacement or a full "
       "refund; there is no need to send the item back."),
    ("orders", "medium", [
        "I received the wrong item in order {order}.",
        "You sent me the wrong thing, I ordered the {item}.",
    ], "Sorry for the mix-up. We will ship the correct item today and email you a free return "
       "label for the wrong one.",
       "Apologies. The right item ships today, and we will email a free label to return the "
       "wrong one."),
    ("technical", "medium", [
        "The checkout page keeps giving an error when I pay.",
        "Checkout fails with 'payment could not be processed'",
        "cant complete checkout, spinner forever",
    ], "Please clear your browser cache or try another browser, and check that your billing "
       "address matches your card. If it still fails, try PayPal or contact your bank.",
       "Try another browser or clear the cache, and make sure the billing address matches the "
       "card. If it keeps failing, pay with PayPal or ask your bank."),
    ("technical", "medium", [
        "My promo code isn't working.",
        "The discount code says invalid",
    ], "Promo codes are case-sensitive, apply to full-price items only and cannot be combined. "
       "Check the expiry date in the email that sent the code.",
       "Codes are case-sensitive, work on full-price items only and can't be stacked; also check "
       "the code's expiry date."),
    ("technical", "hard", [
        "The Beacon smart desk lamp won't connect to the app.",
        "Beacon lamp not pairing with my phone",
    ], "Hold the lamp's power button for 10 seconds until it blinks, then add it again in the "
       "app on a 2.4 GHz Wi-Fi network. The lamp does not support 5 GHz.",
       "Reset the lamp by holding power for 10 seconds until it blinks, then pair it in the app "
       "over 2.4 GHz Wi-Fi, since 5 GHz is not supported."),
    ("technical", "easy", [
        "The app keeps logging me out.",
        "why does your app log me out every day",
    ], "Update the app to the latest version and turn on Keep me signed in at login.",
       "Install the latest app version and tick Keep me signed in when you log in."),
    ("product", "easy", [
        "What is the warranty on the {item}?",
        "Does the {item} have a warranty?",
    ], "The {item} has a {warranty} warranty against defects from the delivery date.",
       "It comes with a {warranty} defect warranty that starts on delivery."),
    ("product", "medium", [
        "Is the Trailhead rain jacket waterproof or just water resistant?",
        "will the trailhead jacket keep me dry in heavy rain",
    ], "It is fully waterproof, with sealed seams and a 20,000 mm rating, so it keeps you dry in "
       "heavy rain.",
       "Yes, it's fully waterproof: sealed seams and a 20,000 mm rating."),
    ("product", "easy", [
        "Is the Alder cast-iron skillet dishwasher safe?",
        "can the alder skillet go in the dishwasher",
    ], "No. Wash it by hand, dry it right away and oil it lightly to keep the seasoning.",
       "It isn't dishwasher safe; hand wash, dry immediately and apply a little oil."),
    ("product", "medium", [
        "When will the {item} be back in stock?",
        "{item} is sold out, when is the restock?",
    ], "We do not have a confirmed restock date. Click Notify me on the product page and we will "
       "email you when it is back.",
       "There's no confirmed date yet; use Notify me on the product page to get an email when "
       "it returns."),
    ("product", "hard", [
        "Are the Quill headphones compatible with both iPhone and Android?",
        "do quill headphones work with android and does the app work too",
    ], "Yes. They connect over Bluetooth 5.3 to iPhone and Android, and the Quill app is "
       "available for both.",
       "They pair with iPhone and Android over Bluetooth 5.3, and the Quill app runs on both."),
    ("general", "easy", [
        "What are your customer service hours?",
        "when is support open",
        "Can I call you on Sunday?",
    ], "Our support team is available {hours} by chat, email and phone.",
       "You can reach support {hours} by chat, email or phone."),
]
# fmt: on

# How customers wrap their question: tone, channel and mess.
ANGRY = [
    "This is ridiculous. ",
    "I'm really frustrated. ",
    "Third time asking!!! ",
    "Honestly, terrible service so far. ",
]
CONTEXT = [
    "I ordered a few things last month for my sister's birthday and one of them was a gift. ",
    "I've been a customer for years and never had an issue before. ",
    "I tried the help center already but couldn't find the answer. ",
    "I'm on my phone so sorry for typos. ",
]
GREETINGS = ["Hi,", "Hello,", "Hi there,", "Dear Larkspur team,", "Good morning,"]
SIGNOFFS = ["Thanks,\nDana", "Regards,\nM. Okafor", "Thank you!\nPriya", "Best,\nTom", "-- Lena"]

# Model habits, one list per failure mode.
PREAMBLES = [
    "Thank you so much for reaching out to Larkspur Goods customer support! I completely "
    "understand how important this is to you, and I'm here to help.",
    "Great question! I'd be more than happy to assist you with that today.",
    "Thank you for contacting us. I sincerely apologize for any inconvenience this may have "
    "caused, and I appreciate your patience.",
]
CLOSINGS = [
    "Is there anything else I can help you with today?",
    "I hope this helps! Please don't hesitate to reach out if you have any other questions.",
    "Have a wonderful day!",
]
SHORT_OPENERS = ["", "", "", "Sure. ", "Happy to help. ", "Thanks for asking. "]
HEDGES = [
    "I'm not completely sure, but I believe",
    "I think that generally",
    "As far as I know,",
]
HALLUCINATIONS = [
    "You will also receive a $10 store credit for the inconvenience.",
    "Orders over $200 are automatically upgraded to express shipping.",
    "Premium members can extend this by an extra 30 days.",
    "This also requires a signed return authorization form sent by fax.",
    "We can also waive all fees if you leave a review first.",
]
NON_ANSWERS = [
    "Thank you for your message. I have forwarded your request to the relevant team, and they "
    "will get back to you as soon as possible.",
    "I understand your concern. Our policies are designed to give every customer the best "
    "experience. You can find more details in our Help Center.",
    "For questions like this, please visit our FAQ page or contact our support team.",
]


def fill(template: str, slots: dict[str, str], policy: dict[str, str]) -> str:
    return template.format(**policy, **slots)


def policy_keys(template: str) -> list[str]:
    return [key for key in re.findall(r"\{(\w+)\}", template) if key in POLICY]


def wrong_policy(rng: random.Random, template: str) -> dict[str, str]:
    """The policy with one fact the answer uses replaced by a plausible wrong value."""
    keys = policy_keys(template)
    if not keys:
        return dict(POLICY)
    key = rng.choice(keys)
    return {**POLICY, key: rng.choice(WRONG[key])}


def hedge(rng: random.Random, answer: str) -> str:
    first = answer[0].lower() + answer[1:]
    return (
        f"{rng.choice(HEDGES)} {first} Policies can change, so you may want to double-check "
        "with our team to be sure."
    )


def first_sentence(answer: str) -> str:
    return re.split(r"(?<=[.!?])\s+", answer)[0]


def customer_question(rng: random.Random, question: str, channel: str) -> str:
    """Wrap a bare question the way real customers write it."""
    text = question
    if rng.random() < 0.2:
        text = rng.choice(ANGRY) + text
    if rng.random() < 0.25:
        text = rng.choice(CONTEXT) + text
    if channel == "email":
        text = f"{rng.choice(GREETINGS)}\n\n{text}\n\n{rng.choice(SIGNOFFS)}"
    return text


Answer = Callable[[random.Random], str]


def v1_answer(rng: random.Random, ref: str, alt: str, wrong: str) -> str:
    """The older model: verbose, sometimes wrong or evasive, sometimes spot on."""
    modes: list[tuple[float, Answer]] = [
        (0.08, lambda r: ref),
        (0.22, lambda r: f"{r.choice(PREAMBLES)} {ref} {r.choice(CLOSINGS)}"),
        (0.20, lambda r: f"{r.choice(PREAMBLES)} {wrong}"),
        (0.10, lambda r: f"{ref} {r.choice(HALLUCINATIONS)}"),
        (0.12, lambda r: hedge(r, ref)),
        (0.12, lambda r: r.choice(NON_ANSWERS)),
        (0.16, lambda r: f"{alt} {r.choice(CLOSINGS)}"),
    ]
    return pick(rng, modes)


def v2_answer(rng: random.Random, ref: str, alt: str, wrong: str) -> str:
    """The newer model: concise and mostly right, with its own occasional slips."""
    modes: list[tuple[float, Answer]] = [
        (0.14, lambda r: ref),
        (0.22, lambda r: r.choice(SHORT_OPENERS) + ref),
        (0.36, lambda r: alt),
        (0.10, lambda r: wrong),
        (0.10, lambda r: first_sentence(alt)),
        (0.08, lambda r: f"{r.choice(PREAMBLES)} {alt}"),
    ]
    return pick(rng, modes)


def pick(rng: random.Random, modes: list[tuple[float, Answer]]) -> str:
    weights = [weight for weight, _ in modes]
    _, make = rng.choices(modes, weights)[0]
    return make(rng)


def order_number(rng: random.Random) -> str:
    return f"#LK-{rng.randint(10000, 99999)}"


def support_rows(rng: random.Random, n_rows: int = 300) -> list[dict[str, Any]]:
    rows = []
    for index in range(n_rows):
        category, difficulty, questions, answer, alt = TOPICS[index % len(TOPICS)]
        slots = {
            "order": order_number(rng),
            "item": rng.choice(ITEMS),
            "days": str(rng.randint(3, 25)),
        }
        channel = "email" if rng.random() < 0.35 else "chat"
        prompt = customer_question(rng, fill(rng.choice(questions), slots, POLICY), channel)
        ref = fill(answer, slots, POLICY)
        paraphrase = fill(alt, slots, POLICY)
        wrong = fill(answer, slots, wrong_policy(rng, answer))
        if wrong == ref:  # the answer quotes no policy fact: the model invents one instead
            wrong = f"{ref} {rng.choice(HALLUCINATIONS)}"
        rows.append(
            {
                "id": f"sq-{index + 1:04d}",
                "prompt": prompt,
                "expected": ref,
                "metadata": {"category": category, "difficulty": difficulty, "channel": channel},
                "predictions": {
                    V1: v1_answer(rng, ref, paraphrase, wrong),
                    V2: v2_answer(rng, ref, paraphrase, wrong),
                },
            }
        )
    return rows


# ---------------------------------------------------------------- order extraction

INTENTS = {
    "return": ["I'd like to return the {items}.", "How do I send back the {items}?"],
    "refund": ["I want my money back for the {items}.", "Please refund the {items}."],
    "exchange": ["Can I swap the {items} for a different size?", "I need to exchange the {items}."],
    "cancel": [
        "Please cancel this order, I don't need the {items} anymore.",
        "Cancel my order with the {items}.",
    ],
    "track": ["Where is my package with the {items}?", "Any update on when the {items} arrive?"],
    "damaged": ["The {items} arrived broken.", "The {items} came damaged, the box was crushed."],
    "change_address": ["I need to send the {items} to a different address."],
}
URGENT = [
    "I need this sorted today.",
    "URGENT please, it's a gift for tomorrow.",
    "This is the second time I'm writing!",
]
RELAXED = ["No rush.", "Whenever you get a chance.", ""]


def extraction_email(rng: random.Random, intent: str, expected: dict[str, Any]) -> str:
    names = [
        f"{item['quantity']} x {item['name']}" if item["quantity"] > 1 else item["name"]
        for item in expected["items"]
    ]
    body = rng.choice(INTENTS[intent]).format(items=" and the ".join(names))
    if expected["order_id"]:
        body = f"Order {expected['order_id']}. {body}"
    else:
        body += " I can't find my order number."
    tone = {"high": URGENT, "low": RELAXED, "normal": [""]}[expected["urgency"]]
    closing = rng.choice(tone)
    greeting = rng.choice(GREETINGS)
    return f"{greeting}\n\n{body} {closing}".rstrip() + f"\n\n{rng.choice(SIGNOFFS)}"


def canonical(obj: dict[str, Any]) -> str:
    return json.dumps(obj, sort_keys=True)


def mistaken(rng: random.Random, expected: dict[str, Any]) -> dict[str, Any]:
    """A plausible extraction error: wrong intent or urgency, a dropped item, a lost id."""
    wrong = json.loads(json.dumps(expected))
    fault = rng.choice(["intent", "urgency", "items", "order_id"])
    if fault == "intent":
        wrong["intent"] = rng.choice([i for i in INTENTS if i != expected["intent"]])
    elif fault == "urgency":
        wrong["urgency"] = rng.choice(
            [u for u in ("low", "normal", "high") if u != wrong["urgency"]]
        )
    elif fault == "items" and len(wrong["items"]) > 1:
        wrong["items"] = wrong["items"][:1]
    elif fault == "items":
        wrong["items"][0]["quantity"] += 1
    else:
        wrong["order_id"] = None
    return wrong


def broken(rng: random.Random, obj: dict[str, Any]) -> str:
    """Invalid JSON the way models emit it."""
    text = canonical(obj)
    fault = rng.choice(["prose", "trailing_comma", "truncated", "fence_prose"])
    if fault == "prose":
        return f"Here is the extracted information:\n{text}"
    if fault == "trailing_comma":
        return text[:-1] + ", }"
    if fault == "truncated":
        return text[: rng.randint(len(text) // 2, len(text) - 2)]
    return f"Sure! ```json\n{json.dumps(obj, indent=2)}\n``` Let me know if you need anything else."


def extraction_prediction(rng: random.Random, expected: dict[str, Any], version: str) -> str:
    roll = rng.random()
    correct, wrong, reformatted = (0.45, 0.20, 0.10) if version == V1 else (0.78, 0.12, 0.07)
    if roll < correct:
        return canonical(expected)
    if roll < correct + wrong:
        return canonical(mistaken(rng, expected))
    if roll < correct + wrong + reformatted:
        return json.dumps(expected, indent=2)  # valid JSON, not the canonical string
    return broken(rng, expected)


def extraction_rows(rng: random.Random, n_rows: int = 80) -> list[dict[str, Any]]:
    rows = []
    for index in range(n_rows):
        intent = rng.choice(sorted(INTENTS))
        items = [
            {"name": name, "quantity": rng.choice([1, 1, 1, 2, 3])}
            for name in rng.sample(ITEMS, rng.choice([1, 1, 2]))
        ]
        expected = {
            "order_id": order_number(rng)[1:] if rng.random() < 0.85 else None,
            "intent": intent,
            "items": items,
            "urgency": rng.choice(["low", "normal", "normal", "high"]),
        }
        rows.append(
            {
                "id": f"ox-{index + 1:04d}",
                "prompt": extraction_email(rng, intent, expected),
                "expected": canonical(expected),
                "metadata": {"intent": intent, "urgency": expected["urgency"]},
                "predictions": {
                    V1: extraction_prediction(rng, expected, V1),
                    V2: extraction_prediction(rng, expected, V2),
                },
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Write the quickstart datasets.")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    write_jsonl(args.out / "support_qa.jsonl", support_rows(random.Random(SEED)))
    write_jsonl(args.out / "order_extraction.jsonl", extraction_rows(random.Random(SEED + 1)))


if __name__ == "__main__":
    main()
