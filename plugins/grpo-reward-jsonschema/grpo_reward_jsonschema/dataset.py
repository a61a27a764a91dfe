"""Dataset ``json-extraction``: a record described in prose, to be answered as JSON following a schema.

Rows are generated from a seed with no network: each picks a kind of record (a person, a
product, a book, an event, an order, a weather report), a random subset of its fields (some
required, some optional, sometimes ``additionalProperties: false``), writes the record as
shuffled sentences, and asks for the JSON. ``expected`` holds the record restricted to the
schema's fields.
"""

from __future__ import annotations

import json
import random

DEFAULT_SYSTEM_PROMPT = (
    "You extract structured data from text. Reply with a single JSON value that follows the "
    "given JSON Schema, and nothing else."
)
DRAFT = "https://json-schema.org/draft/2020-12/schema"

FIRST_NAMES = ["Ada", "Bruno", "Chiara", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas",
               "Kemi", "Luca", "Maya", "Nikhil", "Olga", "Pablo", "Quinn", "Rosa", "Sven", "Tariq"]
LAST_NAMES = ["Almeida", "Brandt", "Chen", "Duarte", "Eriksen", "Fischer", "Garcia", "Haddad", "Ivanova",
              "Jensen", "Kowalski", "Lopez", "Moreau", "Nakamura", "Okafor", "Petrov", "Rossi", "Singh"]
CITIES = ["Lisbon", "Oslo", "Nairobi", "Osaka", "Toronto", "Lyon", "Krakow", "Austin", "Porto", "Seoul",
          "Melbourne", "Valencia", "Leipzig", "Cusco", "Tbilisi"]
SKILLS = ["python", "welding", "accounting", "photography", "spanish", "carpentry", "statistics", "first aid"]
PRODUCTS = ["desk lamp", "travel mug", "wireless mouse", "yoga mat", "rain jacket", "chef's knife",
            "backpack", "mechanical keyboard", "water filter", "camping stove"]
MATERIALS = ["steel", "bamboo", "recycled plastic", "aluminium", "cotton", "oak"]
GENRES = ["mystery", "science fiction", "history", "poetry", "romance", "biography", "fantasy"]
TITLE_WORDS = ["Silent", "Harbor", "Glass", "River", "Northern", "Garden", "Clock", "Salt", "Iron", "Paper",
               "Winter", "Lantern", "Orchard", "Atlas"]
EVENT_KINDS = ["budget review", "design workshop", "quarterly planning", "team retrospective", "product demo"]
CONDITIONS = ["sunny", "cloudy", "rain", "snow", "fog", "storm"]
STATUSES = ["pending", "shipped", "delivered", "cancelled"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY"]


def load_json_extraction(size=1000, seed=0, system_prompt=DEFAULT_SYSTEM_PROMPT):
    """A ``datasets.Dataset`` of ``size`` rows with ``prompt`` (chat messages), ``schema`` and ``expected``."""
    from datasets import Dataset

    if size is None or size < 1:
        raise ValueError(f"size must be 1 or more, got {size}")
    return Dataset.from_list(generate_rows(size, seed, system_prompt))


def generate_rows(size: int, seed: int = 0, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> list[dict]:
    """The rows of the dataset as plain dicts (the same ``seed`` always gives the same rows)."""
    rng = random.Random(f"json-extraction:{seed}")
    return [make_row(rng, system_prompt) for _ in range(size)]


def make_row(rng: random.Random, system_prompt: str | None = DEFAULT_SYSTEM_PROMPT) -> dict:
    """One row: a record of a random kind, its schema, the prose and the chat prompt."""
    kind = rng.choice(sorted(KINDS))
    title, fields, intro = KINDS[kind](rng)
    names = list(fields)
    keep = sorted(rng.sample(range(len(names)), rng.randint(min(3, len(names)), len(names))))
    chosen = [names[i] for i in keep]
    required = [name for name in chosen if rng.random() < 0.7] or [chosen[0]]
    schema = {
        "$schema": DRAFT,
        "title": title,
        "type": "object",
        "properties": {name: fields[name][0] for name in chosen},
        "required": required,
    }
    if rng.random() < 0.5:
        schema["additionalProperties"] = False
    sentences = [fields[name][2] for name in chosen]
    rng.shuffle(sentences)
    unused = [name for name in names if name not in chosen]
    if unused:  # a fact the schema does not ask for, as real documents have
        sentences.insert(rng.randint(0, len(sentences)), fields[rng.choice(unused)][2])
    expected = {name: fields[name][1] for name in chosen}
    text = intro + " " + " ".join(sentences)
    schema_json = json.dumps(schema)
    user = (
        f"Extract the {title.lower()} described below as JSON that follows this JSON Schema.\n\n"
        f"Schema:\n```json\n{schema_json}\n```\n\nText:\n{text}"
    )
    prompt = [{"role": "user", "content": user}]
    if system_prompt:
        prompt.insert(0, {"role": "system", "content": system_prompt})
    return {"prompt": prompt, "schema": schema_json, "expected": json.dumps(expected)}


# Each kind returns (title, {field: (property schema, value, sentence)}, opening sentence).


def _person(rng):
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    name = f"{first} {last}"
    age = rng.randint(18, 90)
    email = f"{first.lower()}.{last.lower()}@example.org"
    city = rng.choice(CITIES)
    member = rng.random() < 0.5
    skills = rng.sample(SKILLS, rng.randint(1, 3))
    phone = f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
    fields = {
        "name": ({"type": "string", "minLength": 1}, name, f"Their full name is {name}."),
        "age": ({"type": "integer", "minimum": 0, "maximum": 130}, age, f"{first} is {age} years old."),
        "email": ({"type": "string", "format": "email"}, email, f"You can write to {email}."),
        "city": ({"type": "string"}, city, f"{first} lives in {city}."),
        "is_member": ({"type": "boolean"}, member,
                      f"{first} {'is' if member else 'is not'} a member of the loyalty program."),
        "skills": ({"type": "array", "items": {"type": "string"}, "minItems": 1}, skills,
                   f"Listed skills: {', '.join(skills)}."),
        "phone": ({"type": "string"}, phone, f"Their phone number is {phone}."),
    }
    return "Person", fields, f"Here is a note about a new contact, {first}."


def _product(rng):
    name = rng.choice(PRODUCTS)
    price = round(rng.uniform(3, 400), 2)
    currency = rng.choice(CURRENCIES)
    stock = rng.randint(0, 500)
    material = rng.choice(MATERIALS)
    width, height = rng.randint(5, 120), rng.randint(5, 120)
    sku = f"{name[:3].upper()}-{rng.randint(1000, 9999)}"
    fields = {
        "name": ({"type": "string"}, name, f"The item is a {name}."),
        "sku": ({"type": "string"}, sku, f"Its stock-keeping code is {sku}."),
        "price": ({"type": "number", "minimum": 0}, price, f"It sells for {price} {currency}."),
        "currency": ({"enum": CURRENCIES}, currency, f"Prices are quoted in {currency}."),
        "stock": ({"type": "integer", "minimum": 0}, stock, f"There are {stock} units in the warehouse."),
        "material": ({"type": "string"}, material, f"It is made of {material}."),
        "dimensions_cm": (
            {"type": "object", "properties": {"width": {"type": "number"}, "height": {"type": "number"}},
             "required": ["width", "height"], "additionalProperties": False},
            {"width": width, "height": height},
            f"It measures {width} cm wide by {height} cm high.",
        ),
    }
    return "Product", fields, "A catalogue entry follows."


def _book(rng):
    title = f"The {rng.choice(TITLE_WORDS)} {rng.choice(TITLE_WORDS)}"
    author = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    year = rng.randint(1850, 2024)
    pages = rng.randint(90, 900)
    genres = rng.sample(GENRES, rng.randint(1, 2))
    rating = round(rng.uniform(1, 5), 1)
    fields = {
        "title": ({"type": "string"}, title, f"The book is called {title}."),
        "author": ({"type": "string"}, author, f"It was written by {author}."),
        "year": ({"type": "integer", "minimum": 1400, "maximum": 2100}, year, f"It first appeared in {year}."),
        "pages": ({"type": "integer", "minimum": 1}, pages, f"The paperback runs to {pages} pages."),
        "genres": ({"type": "array", "items": {"enum": GENRES}, "minItems": 1, "uniqueItems": True}, genres,
                   f"Shops file it under {' and '.join(genres)}."),
        "rating": ({"type": "number", "minimum": 0, "maximum": 5}, rating, f"Readers rate it {rating} out of 5."),
    }
    return "Book", fields, "A short review from the library newsletter."


def _event(rng):
    kind = rng.choice(EVENT_KINDS)
    month, day = rng.randint(1, 12), rng.randint(1, 28)
    date = f"2025-{month:02d}-{day:02d}"
    hour = rng.randint(8, 17)
    start = f"{hour:02d}:{rng.choice(['00', '15', '30', '45'])}"
    duration = rng.choice([15, 30, 45, 60, 90, 120])
    attendees = [f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}" for _ in range(rng.randint(2, 4))]
    city = rng.choice(CITIES)
    room = f"Room {rng.randint(1, 9)}{rng.randint(0, 9)}"
    online = rng.random() < 0.3
    fields = {
        "title": ({"type": "string"}, kind, f"The meeting is the {kind}."),
        "date": ({"type": "string", "format": "date"}, date, f"It takes place on {date}."),
        "start_time": ({"type": "string"}, start, f"It starts at {start}."),
        "duration_minutes": ({"type": "integer", "minimum": 1}, duration, f"It should last {duration} minutes."),
        "attendees": ({"type": "array", "items": {"type": "string"}}, attendees,
                      f"Invited: {', '.join(attendees)}."),
        "location": (
            {"type": "object", "properties": {"city": {"type": "string"}, "room": {"type": "string"}},
             "required": ["city"]},
            {"city": city, "room": room},
            f"It will be held in {room} of the {city} office.",
        ),
        "online": ({"type": "boolean"}, online,
                   "A video link will be shared." if online else "There is no video link; attend in person."),
    }
    return "Event", fields, "From the shared calendar:"


def _order(rng):
    order_id = f"ORD-{rng.randint(10000, 99999)}"
    customer = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    status = rng.choice(STATUSES)
    items = []
    for product in rng.sample(PRODUCTS, rng.randint(1, 3)):
        items.append({"product": product, "quantity": rng.randint(1, 5), "unit_price": round(rng.uniform(2, 150), 2)})
    total = round(sum(item["quantity"] * item["unit_price"] for item in items), 2)
    express = rng.random() < 0.4
    described = "; ".join(f"{i['quantity']} x {i['product']} at {i['unit_price']} each" for i in items)
    item_schema = {
        "type": "object",
        "properties": {"product": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1},
                       "unit_price": {"type": "number", "minimum": 0}},
        "required": ["product", "quantity", "unit_price"],
    }
    fields = {
        "order_id": ({"type": "string"}, order_id, f"The order number is {order_id}."),
        "customer": ({"type": "string"}, customer, f"It was placed by {customer}."),
        "status": ({"enum": STATUSES}, status, f"Its current status is {status}."),
        "items": ({"type": "array", "items": item_schema, "minItems": 1}, items, f"It contains: {described}."),
        "total": ({"type": "number", "minimum": 0}, total, f"The total comes to {total}."),
        "express": ({"type": "boolean"}, express,
                    "The customer paid for express shipping." if express else "Standard shipping was chosen."),
    }
    return "Order", fields, "A support ticket mentions an order."


def _weather(rng):
    city = rng.choice(CITIES)
    temperature = round(rng.uniform(-15, 38), 1)
    condition = rng.choice(CONDITIONS)
    humidity = rng.randint(10, 100)
    wind = round(rng.uniform(0, 80), 1)
    warning = rng.random() < 0.2
    fields = {
        "city": ({"type": "string"}, city, f"This is the report for {city}."),
        "temperature_c": ({"type": "number"}, temperature, f"The temperature is {temperature} degrees Celsius."),
        "condition": ({"enum": CONDITIONS}, condition, f"Expect {condition} today."),
        "humidity_percent": ({"type": "integer", "minimum": 0, "maximum": 100}, humidity,
                             f"Humidity stands at {humidity} percent."),
        "wind_kph": ({"type": "number", "minimum": 0}, wind, f"Winds reach {wind} km/h."),
        "warning": ({"type": "boolean"}, warning,
                    "A weather warning is in effect." if warning else "No warnings have been issued."),
    }
    return "Weather report", fields, "Today's forecast."


KINDS = {"person": _person, "product": _product, "book": _book, "event": _event, "order": _order, "weather": _weather}
