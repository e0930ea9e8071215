"""Drives a running gpubill through the Python client generated from its /openapi.json.

Run by tests/openapi_client.rs (never by hand: it needs the generated package `gpubill_client`
on PYTHONPATH). Environment: GPUBILL_URL (the server), GPUBILL_ADMIN_TOKEN, GPUBILL_PRICEBOOK
(a TOML file), GPUBILL_ACCOUNT (the account to create). With the admin token it creates the
account, uploads the price book, tops the wallet up, posts a few gpu.usage events of November
2026 (one of them twice, one invalid) and closes 2026-11; with the account's API key it reads
its usage, current cost, invoices and one invoice, and asks for an invoice that does not exist.

Prints one JSON object on stdout: `events` (what was posted), `answers` (every parsed answer
as the client's models give it back, `to_dict()`) and `figures` (numbers read from the models'
typed attributes). Any unexpected status or answer exits non-zero with the reason on stderr.
"""

import io
import json
import os
import sys
from decimal import Decimal

from gpubill_client import AuthenticatedClient
from gpubill_client.api.default import (
    close,
    cost_current,
    create_account,
    ingest,
    invoice,
    invoices,
    put_pricebook,
    topups,
    usage,
)
from gpubill_client.models import (
    AccountCreated,
    CloudEvent,
    CostCurrent,
    Error,
    EventStatus,
    IngestResult,
    IssuedInvoice,
    MoneyMovement,
    MovementResult,
    NewAccount,
    PriceBookVersion,
    Usage,
)
from gpubill_client.types import File


def fail(what, response):
    sys.exit(f"{what}: HTTP {int(response.status_code)}: {response.content.decode(errors='replace')}")


def expect(what, response, status, model):
    """The parsed answer of `response`, which must have `status` and parse as `model`."""
    if int(response.status_code) != status:
        fail(what, response)
    parsed = response.parsed
    if not isinstance(parsed, model):
        sys.exit(f"{what}: parsed as {type(parsed).__name__}, not {model.__name__}")
    return parsed


def event(event_id, resource, sku, start, end, quantity=None):
    data = {"lease": "L-" + resource, "resource": resource, "sku": sku, "start": start, "end": end}
    if quantity is not None:
        data["quantity"] = quantity
    return {
        "specversion": "1.0",
        "id": event_id,
        "source": "node/openapi-client",
        "type": "gpu.usage",
        "subject": os.environ["GPUBILL_ACCOUNT"],
        "time": end,
        "data": data,
    }


def main():
    url = os.environ["GPUBILL_URL"]
    account = os.environ["GPUBILL_ACCOUNT"]
    admin = AuthenticatedClient(base_url=url, token=os.environ["GPUBILL_ADMIN_TOKEN"], timeout=30)
    answers = {}

    created = expect(
        "create account",
        create_account.sync_detailed(client=admin, body=NewAccount(id=account)),
        201,
        AccountCreated,
    )
    answers["create_account"] = created.to_dict()

    with open(os.environ["GPUBILL_PRICEBOOK"], "rb") as f:
        book = f.read()
    version = expect(
        "put price book",
        put_pricebook.sync_detailed(
            client=admin, body=File(payload=io.BytesIO(book), file_name="pricebook.toml", mime_type="application/toml")
        ),
        201,
        PriceBookVersion,
    )
    answers["put_pricebook"] = version.to_dict()

    topup = expect(
        "top-up",
        topups.sync_detailed(account, client=admin, body=MoneyMovement(amount="10.00", reference="wire-openapi-1")),
        201,
        MovementResult,
    )
    answers["topup"] = topup.to_dict()

    events = [
        event("oc-1", "gpu0", "gpu.h100-80g", "2026-11-10T10:00:00Z", "2026-11-10T12:00:00Z"),
        event("oc-2", "gpu1", "gpu.h100-80g", "2026-11-10T10:00:00Z", "2026-11-10T11:30:00Z"),
        event("oc-3", "vgpu0", "vgpu.t4-quarter", "2026-11-12T00:00:00Z", "2026-11-12T06:00:00Z", "0.25"),
    ]
    again = events[0]
    invalid = event("oc-4", "gpu2", "gpu.h100-80g", "2026-11-13T10:00:00Z", "2026-11-13T09:00:00Z")
    batch = [CloudEvent.from_dict(e) for e in [*events, again, invalid]]
    ingested = expect("ingest", ingest.sync_detailed(client=admin, body=batch), 200, IngestResult)
    answers["ingest"] = ingested.to_dict()
    statuses = [r.status for r in ingested.results]
    if statuses != [EventStatus.ACCEPTED] * 3 + [EventStatus.DUPLICATE, EventStatus.REJECTED]:
        sys.exit(f"ingest: unexpected statuses {statuses}")

    closed = expect("close", close.sync_detailed(client=admin, period="2026-11"), 200, list)
    answers["close"] = [i.to_dict() for i in closed]

    customer = AuthenticatedClient(base_url=url, token=created.api_key, timeout=30)
    used = expect(
        "usage",
        usage.sync_detailed(
            client=customer, from_="2026-11-01T00:00:00Z", to="2026-12-01T00:00:00Z", granularity="day"
        ),
        200,
        Usage,
    )
    answers["usage"] = used.to_dict()

    cost = expect("cost", cost_current.sync_detailed(client=customer), 200, CostCurrent)
    answers["cost_current"] = cost.to_dict()

    listed = expect("invoices", invoices.sync_detailed(client=customer, period="2026-11"), 200, list)
    answers["invoices"] = [d.to_dict() for d in listed]
    issued = [d for d in listed if isinstance(d, IssuedInvoice)]
    if len(issued) != 1:
        sys.exit(f"invoices: {len(issued)} invoices for 2026-11, not 1")
    one = expect("invoice", invoice.sync_detailed(issued[0].id, client=customer), 200, IssuedInvoice)
    answers["invoice"] = one.to_dict()

    missing = expect("missing invoice", invoice.sync_detailed("inv_nope", client=customer), 404, Error)
    answers["missing_invoice"] = missing.to_dict()

    figures = {
        "account": one.account,
        "currency": one.currency,
        "period": [one.period.start, one.period.end],
        "lines": [
            {
                "component": l.component,
                "sku": l.sku,
                "tier": l.tier,
                "quantity": l.quantity,
                "unit": l.unit.value,
                "amount": l.amount,
            }
            for l in one.lines
        ],
        "subtotal": one.subtotal,
        "discount": one.discount,
        "credit": one.credit,
        "tax": one.tax,
        "total": one.total,
        "amount_due": one.amount_due,
        "paid": one.paid,
        "status": one.status.value,
        "number": one.number,
        # Decimal strings summed exactly, as the server would.
        "usage_unit_seconds": {
            g.key: str(sum((Decimal(b.unit_seconds) for b in g.buckets), Decimal(0))) for g in used.groups
        },
        "wallet_balance_after_topup": topup.balance,
        "cost_current_total": cost.invoice.total,
        "error": missing.error,
    }
    json.dump({"events": [*events, again, invalid], "answers": answers, "figures": figures}, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
