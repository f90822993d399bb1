// Kettle & Kite's shop system as an MCP server over stdio: order lookup, and the refund API.
// It stands for the systems a support team already has; the workflow decides which state may
// call which tool (see .mcp.json beside this folder, and the grants in order-lookup's workflow).
//
// Uses the official TypeScript SDK (installed with this repository's development
// dependencies). Refunds are appended to a ledger file: $SHOP_LEDGER, or
// kettle-and-kite-refunds.jsonl in the system's temporary folder.
import { appendFileSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import { z } from 'zod'

const here = dirname(fileURLToPath(import.meta.url))
const data = JSON.parse(readFileSync(join(here, '../skills/order-data/assets/orders.json'), 'utf8'))
const ledger = process.env.SHOP_LEDGER || join(tmpdir(), 'kettle-and-kite-refunds.jsonl')

const server = new McpServer({ name: 'kettle-and-kite-shop', version: '1.0.0' })

server.registerTool(
  'lookup_order',
  {
    title: 'Look an order up',
    description: 'The order with this number (KK-####): customer, status, dates, items, total, carrier and tracking.',
    inputSchema: { order_id: z.string().regex(/^KK-\d{4}$/).describe('The order number, e.g. KK-2043') },
  },
  async ({ order_id }) => {
    const order = data.orders.find((o) => o.id === order_id)
    if (!order) return { content: [{ type: 'text', text: `No order ${order_id}.` }], isError: true }
    const customer = data.customers.find((c) => c.name === order.customer)
    const found = { ...order, customer_tier: customer?.tier ?? 'standard' }
    return { content: [{ type: 'text', text: JSON.stringify(found) }], structuredContent: found }
  },
)

server.registerTool(
  'issue_refund',
  {
    title: 'Issue a refund',
    description: 'Pays a refund back to the original payment method. Irreversible.',
    inputSchema: {
      order_id: z.string().regex(/^KK-\d{4}$/),
      amount: z.number().positive(),
      currency: z.literal('EUR'),
    },
  },
  async ({ order_id, amount, currency }) => {
    const order = data.orders.find((o) => o.id === order_id)
    if (!order) return { content: [{ type: 'text', text: `No order ${order_id}.` }], isError: true }
    if (amount > order.total) {
      return { content: [{ type: 'text', text: `Refused: ${amount.toFixed(2)} ${currency} is more than the order total of ${order.total.toFixed(2)}.` }], isError: true }
    }
    const refund = { refund_id: `R-${order_id}`, order_id, amount, currency }
    appendFileSync(ledger, `${JSON.stringify({ ...refund, at: new Date().toISOString() })}\n`)
    return { content: [{ type: 'text', text: `Refund ${refund.refund_id} of ${amount.toFixed(2)} ${currency} issued for ${order_id}.` }], structuredContent: refund }
  },
)

await server.connect(new StdioServerTransport())
