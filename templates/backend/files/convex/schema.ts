import { defineSchema } from "convex/server";

export default defineSchema({
  // Declare the app's tables here, for example:
  // messages: defineTable({ author: v.string(), body: v.string() }),
});
