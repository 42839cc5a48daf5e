import { httpRouter } from "convex/server";

const http = httpRouter();

export default http;
