export default function HomePage() {
  return (
    <main>
      <h1>Cloud backend service</h1>
      <p>
        Gives every AI-built mobile app a cloud backend and a home for its files. The API lives under{" "}
        <code>/api</code>; start with <code>GET /api/health</code> and <code>GET /api/projects</code> using the demo
        token printed at start.
      </p>
    </main>
  );
}
