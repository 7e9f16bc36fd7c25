/// <reference types="vitest/config" />
// Build and local serving of the browser client. `vite preview` / `vite dev` proxy the
// agent's Gradio app and the backend the same way the nginx gateway does in production.
import { svelte } from "@sveltejs/vite-plugin-svelte";
import { defineConfig, type ProxyOptions } from "vite";

const backend = process.env.BACKEND_URL ?? "http://127.0.0.1:8000";
const agent = process.env.AGENT_URL ?? "http://127.0.0.1:7860";

// Host is kept as the browser sent it (changeOrigin: false) so Gradio builds its root URL
// from the address the person actually opened.
const proxy: Record<string, ProxyOptions> = {
  "/api/agent/gradio": { target: agent, changeOrigin: false, ws: true },
  "/api/agent/mcp": { target: agent, changeOrigin: false },
  "/api": { target: backend, changeOrigin: false },
};

export default defineConfig({
  plugins: [svelte()],
  build: {
    target: "es2022",
    sourcemap: false,
    chunkSizeWarningLimit: 300,
  },
  server: { proxy },
  preview: { proxy },
  test: {
    include: ["src/**/*.test.ts"],
    environment: "node",
  },
});
